import NIOCore
import NIOWebSocket

/// A dialer's frame writer (RFC 6455 §5.2): owns the encoding of the frames a client
/// sends, each masked with a fresh random key by `WebSocketMask`, and writes their bytes
/// from its place in the pipeline, in front of SwiftNIO's `WebSocketFrameEncoder`.
///
/// NIO's client upgrade puts that encoder in the pipeline and it cannot be removed; it
/// masks a byte at a time. `BLIPWebSocketHandler` of a client hands its frames here
/// instead, so they never reach it. It passes anything else written through it on as is.
final class MaskedFrameWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Writes `frame` masked with a random key (event loop only; not flushed).
    func write(_ frame: WebSocketFrame, promise: EventLoopPromise<Void>?) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        let (header, payload) = Self.encode(frame, key: .random(), allocator: context.channel.allocator)
        context.write(wrapOutboundOut(header), promise: nil)
        context.write(wrapOutboundOut(payload), promise: promise)
    }

    /// The bytes of `frame` masked with `key`: its header (first byte, length, key) and
    /// its payload (extension data, then application data). `frame.maskKey` is ignored.
    static func encode(
        _ frame: WebSocketFrame, key: WebSocketMaskingKey, allocator: ByteBufferAllocator
    ) -> (header: ByteBuffer, payload: ByteBuffer) {
        var payload: ByteBuffer
        if var extensionData = frame.extensionData, extensionData.readableBytes > 0 {
            var data = frame.data
            extensionData.writeBuffer(&data)
            payload = extensionData
        } else {
            payload = frame.data
        }
        WebSocketMask.apply(key, to: &payload)
        let length = payload.readableBytes
        var header = allocator.buffer(capacity: maximumHeaderLength)
        header.writeInteger(firstByte(of: frame))
        switch length {
        case 0...125:
            header.writeInteger(UInt8(length) | 0x80)
        case 126...Int(UInt16.max):
            header.writeInteger(UInt8(126) | 0x80)
            header.writeInteger(UInt16(length))
        default:
            header.writeInteger(UInt8(127) | 0x80)
            header.writeInteger(UInt64(length))
        }
        header.writeBytes(key)
        return (header, payload)
    }

    /// FIN, the three reserved bits and the opcode.
    static func firstByte(of frame: WebSocketFrame) -> UInt8 {
        (frame.fin ? 0x80 : 0) | (frame.rsv1 ? 0x40 : 0) | (frame.rsv2 ? 0x20 : 0) | (frame.rsv3 ? 0x10 : 0)
            | UInt8(webSocketOpcode: frame.opcode)
    }

    /// First byte, length byte, 64-bit length, masking key.
    static let maximumHeaderLength = 2 + 8 + 4
}
