import HummingbirdCore
import Logging
import NIOCore

/// A Hummingbird child channel that puts handlers in front of the HTTP (and WebSocket
/// upgrade) pipeline of `Base` on every accepted connection: the `TLSSniffer` (one
/// port serving TLS, plain HTTP or both as the listener's `ListenerTLS` says) and the
/// `RequestHeadDeadline` (slowloris clients).
struct FrontHandlersChannel<Base: ServerChildChannel & HTTPChannelHandler>: ServerChildChannel, HTTPChannelHandler {
    typealias Value = Base.Value

    let base: Base
    /// New handlers for one connection, in pipeline order.
    let handlers: @Sendable () -> [any ChannelHandler]

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            for handler in handlers() {
                try channel.pipeline.syncOperations.addHandler(handler)
            }
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }

    var responder: HTTPChannelHandler.Responder { base.responder }
}
