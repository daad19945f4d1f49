import NIOCore
import NIOSSL

/// First handler of a public-port connection when the listener has TLS: looks at the
/// first byte the client sends. A TLS handshake record (0x16) puts the TLS server
/// handler in its place; anything else is plain HTTP, served as is when TLS is
/// optional and answered with a 400 when it is required. Removes itself either way.
final class TLSSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    /// A TLS record of type handshake starts with this byte; no HTTP method does.
    static let handshakeRecord: UInt8 = 0x16
    static let plainRefusal =
        "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: 79\r\n\r\n"
        + "{\"error\":\"Bad Request\",\"reason\":\"This port needs TLS: use https:// or wss://\"}\n"

    let tls: ListenerTLS
    private var decided = false

    init(tls: ListenerTLS) {
        self.tls = tls
    }

    /// What to do with a connection whose first byte is `byte`.
    enum Decision: Equatable { case tls, plain, refuse }

    static func decide(firstByte byte: UInt8, mode: ListenerTLS.Mode) -> Decision {
        if byte == handshakeRecord { return .tls }
        return mode == .required ? .refuse : .plain
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        guard !decided else {
            context.fireChannelRead(data)
            return
        }
        guard let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return }
        decided = true
        let operations = context.pipeline.syncOperations
        switch Self.decide(firstByte: first, mode: tls.mode) {
        case .tls:
            do {
                try operations.addHandler(NIOSSLServerHandler(context: tls.context), position: .after(self))
            } catch {
                context.close(promise: nil)
                return
            }
            context.fireChannelRead(data)
            operations.removeHandler(context: context, promise: nil)
        case .plain:
            context.fireChannelRead(data)
            operations.removeHandler(context: context, promise: nil)
        case .refuse:
            let answer = context.channel.allocator.buffer(string: Self.plainRefusal)
            context.writeAndFlush(NIOAny(answer), promise: nil)
            context.close(promise: nil)
        }
    }
}
