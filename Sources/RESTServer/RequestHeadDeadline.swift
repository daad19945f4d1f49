import NIOCore

/// First HTTP handler of every accepted connection (after TLS): closes the connection
/// if its first request head has not fully arrived within `limit` of the accept — a
/// slowloris client that sends nothing, or trickles header bytes to hold the socket.
/// Removes itself once the head is complete; from then on Hummingbird's idle timeout
/// covers the time between requests, and an upgraded BLIP connection its heartbeat.
final class RequestHeadDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let limit: TimeAmount
    private var scanner = HeadTerminatorScanner()
    private var timer: Scheduled<Void>?

    init(limit: TimeAmount) {
        self.limit = limit
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let complete = scanner.feed(unwrapInboundIn(data).readableBytesView)
        context.fireChannelRead(data)
        if complete {
            timer?.cancel()
            timer = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard timer == nil, !scanner.found else { return }
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: limit) { channel.close(promise: nil) }
    }
}
