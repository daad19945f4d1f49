import NIOCore
import NIOHTTP1

/// Server side: waits in the HTTP pipeline for the end of the WebSocket upgrade and
/// then, before any WebSocket frame is decoded, puts a `BLIPWebSocketHandler` right
/// behind the frame decoder, so that no frame reaches the HTTP server's own
/// WebSocket layer. Removes itself.
final class BLIPUpgradeInstaller: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    let pingPeriod: TimeAmount?
    let promise: EventLoopPromise<WebSocketLink>

    init(pingPeriod: TimeAmount?, promise: EventLoopPromise<WebSocketLink>) {
        self.pingPeriod = pingPeriod
        self.promise = promise
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .upgradeComplete? = event as? HTTPServerUpgradeEvents {
            do {
                promise.succeed(try BLIPWebSocketChannel.install(on: context.channel, isClient: false, pingPeriod: pingPeriod))
            } catch {
                promise.fail(error)
                context.close(promise: nil)
            }
            context.fireUserInboundEventTriggered(event)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        promise.fail(ChannelError.ioOnClosedChannel)  // ignored when already succeeded
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }
}
