import NIOCore
import NIOSSL
import NIOTLS

/// Client side of a `wss://` dial: waits behind the TLS handler for the end of the
/// handshake, then hands over the server certificate's DER bytes (so the upgrade
/// request can be built for that certificate) and removes itself. A failed handshake
/// or a connection that ends first reports the error instead.
final class TLSHandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private var onDone: ((Result<[UInt8]?, any Error>, ChannelHandlerContext) -> Void)?

    init(onDone: @escaping (Result<[UInt8]?, any Error>, ChannelHandlerContext) -> Void) {
        self.onDone = onDone
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent {
            let der: Result<[UInt8]?, any Error> = Result {
                let handler = try context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
                return try handler.peerCertificate?.toDERBytes()
            }
            finish(der, context: context)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error), context: context)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(ChannelError.ioOnClosedChannel), context: context)
        context.fireChannelInactive()
    }

    private func finish(_ result: Result<[UInt8]?, any Error>, context: ChannelHandlerContext) {
        guard let onDone else { return }
        self.onDone = nil
        onDone(result, context)
    }
}
