import NIOCore

/// First HTTP handler of every accepted connection (after TLS): the first request head
/// must arrive within `limit` of the accept and be at most `maxBytes` long. A slowloris
/// client that sends nothing, or trickles header bytes to hold the socket, gets a `408`
/// and is closed; a head that grows past `maxBytes` gets a `431` and is closed (below
/// the HTTP parser's own limit, whose error would leave the connection hanging).
/// Removes itself once the head is complete; from then on Hummingbird's idle timeout
/// covers the time between requests, and an upgraded BLIP connection its heartbeat.
final class RequestHeadDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Default largest request head (request line and headers).
    static let defaultMaxBytes = 64 * 1024

    let limit: TimeAmount
    let maxBytes: Int
    private var scanner = HeadTerminatorScanner()
    private var timer: Scheduled<Void>?
    private var refused = false

    init(limit: TimeAmount, maxBytes: Int = RequestHeadDeadline.defaultMaxBytes) {
        self.limit = limit
        self.maxBytes = maxBytes
    }

    /// A complete answer that closes the connection: status line and a JSON error.
    static func refusal(_ status: String, _ reason: String) -> String {
        let body = "{\"error\":\"\(status.hasPrefix("408") ? "timeout" : "too_large")\",\"reason\":\"\(reason)\"}\n"
        return "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
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
        guard !refused else { return }
        let complete = scanner.feed(unwrapInboundIn(data).readableBytesView)
        if scanner.headLength > maxBytes {
            refuse(context, Self.refusal("431 Request Header Fields Too Large", "Request head over \(maxBytes) bytes"))
            return
        }
        context.fireChannelRead(data)
        if complete {
            timer?.cancel()
            timer = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard timer == nil, !scanner.found else { return }
        let answer = Self.refusal("408 Request Timeout", "No complete request head within \(limit.nanoseconds / 1_000_000) ms")
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: limit) {
            bound.value.handler.refuse(bound.value.context, answer)
        }
    }

    /// Answers from this handler's place in the pipeline (below the HTTP encoder, so
    /// as raw bytes) and closes the connection.
    private func refuse(_ context: ChannelHandlerContext, _ answer: String) {
        guard !refused else { return }
        refused = true
        timer?.cancel()
        timer = nil
        let channel = context.channel
        context.writeAndFlush(wrapInboundOut(channel.allocator.buffer(string: answer)))
            .whenComplete { _ in channel.close(promise: nil) }
    }
}
