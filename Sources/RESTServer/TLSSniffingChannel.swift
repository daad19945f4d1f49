import HummingbirdCore
import Logging
import NIOCore

/// A Hummingbird child channel that puts a `TLSSniffer` in front of the HTTP (and
/// WebSocket upgrade) pipeline of `Base`, so one port serves TLS, plain HTTP or both
/// as the listener's `ListenerTLS` says.
struct TLSSniffingChannel<Base: ServerChildChannel & HTTPChannelHandler>: ServerChildChannel, HTTPChannelHandler {
    typealias Value = Base.Value

    let base: Base
    let tls: ListenerTLS

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(TLSSniffer(tls: tls))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }

    var responder: HTTPChannelHandler.Responder { base.responder }
}
