import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing
import TestSupport

@testable import BLIP

/// `MaskedFrameWriter`: the same bytes as SwiftNIO's `WebSocketFrameEncoder` for the same
/// key at every length boundary, and in a client pipeline as `BLIPWebSocketChannel.install`
/// builds it, frames that NIO's decoder, fed a byte at a time, reads back.
@Suite(.ownThread) struct MaskedFrameWriterTests {
    /// The bytes NIO's encoder writes for `frame` masked with `key`.
    static func nioBytes(_ frame: WebSocketFrame, key: WebSocketMaskingKey) throws -> [UInt8] {
        let channel = EmbeddedChannel(handler: WebSocketFrameEncoder())
        var masked = frame
        masked.maskKey = key
        try channel.writeOutbound(masked)
        var bytes: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readableBytesView }
        _ = try channel.finish()
        return bytes
    }

    @Test func encodesLikeNIOsEncoder() throws {
        var rng = SplitMix64(seed: 3)
        let cases: [(WebSocketOpcode, Bool, Int)] = [
            (.binary, true, 0), (.binary, true, 1), (.binary, true, 125), (.binary, true, 126), (.binary, false, 127),
            (.continuation, true, 65_535), (.binary, true, 65_536), (.text, true, 300), (.ping, true, 4),
            (.pong, true, 0), (.connectionClose, true, 2),
        ]
        for (opcode, fin, length) in cases {
            let key = WebSocketMaskingKey((0..<4).map { _ in UInt8(truncatingIfNeeded: rng.next()) })!
            let data = ByteBuffer(bytes: (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
            let frame = WebSocketFrame(fin: fin, opcode: opcode, data: data)
            let (header, payload) = MaskedFrameWriter.encode(frame, key: key, allocator: ByteBufferAllocator())
            let ours = Array(header.readableBytesView) + Array(payload.readableBytesView)
            #expect(ours == (try Self.nioBytes(frame, key: key)), "\(opcode) fin \(fin) length \(length)")
        }
        let reserved = WebSocketFrame(fin: true, rsv1: true, rsv3: true, opcode: .binary, data: ByteBuffer(bytes: [1]))
        let (header, _) = MaskedFrameWriter.encode(reserved, key: [1, 2, 3, 4], allocator: ByteBufferAllocator())
        let first: UInt8 = try #require(header.getInteger(at: 0, as: UInt8.self))
        #expect(first == 0b1101_0010, "FIN, RSV1, RSV3, binary")
    }

    @Test func extensionDataIsMaskedAheadOfTheApplicationData() throws {
        let key: WebSocketMaskingKey = [0x11, 0x22, 0x33, 0x44]
        let frame = WebSocketFrame(
            fin: true, opcode: .binary, data: ByteBuffer(bytes: Array(10..<20)), extensionData: ByteBuffer(bytes: [1, 2, 3]))
        let (header, payload) = MaskedFrameWriter.encode(frame, key: key, allocator: ByteBufferAllocator())
        #expect(Array(header.readableBytesView) + Array(payload.readableBytesView) == (try Self.nioBytes(frame, key: key)))
    }

    /// A client pipeline (NIO's encoder and decoder, then `install`): the BLIP handler's
    /// frames leave as bytes, never as `WebSocketFrame`s for NIO's encoder, each with a
    /// fresh key; a server-side decoder fed them a byte at a time reads the payloads.
    @Test func aClientsFramesGoOutMaskedAndDecode() throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.pipeline.syncOperations.addHandler(WebSocketFrameEncoder())
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 16)))
        _ = try BLIPWebSocketChannel.install(on: channel, isClient: true, pingPeriod: nil)
        let handler = try channel.pipeline.syncOperations.handler(type: BLIPWebSocketHandler.self)
        let payloads = [Array(repeating: UInt8(7), count: 3), Array(0..<200).map { UInt8($0) }, []]
        handler.writeFrames(payloads.map { ByteBuffer(bytes: $0) })

        var wire: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { wire += buffer.readableBytesView }
        let server = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 16)))
        for byte in wire { try server.writeInbound(ByteBuffer(bytes: [byte])) }
        var keys: [[UInt8]] = []
        for payload in payloads {
            let frame = try #require(try server.readInbound(as: WebSocketFrame.self))
            #expect(frame.opcode == .binary && frame.fin)
            let key = try #require(frame.maskKey)
            keys.append(Array(key))
            #expect(Array(frame.unmaskedData.readableBytesView) == payload)
        }
        #expect(try server.readInbound(as: WebSocketFrame.self) == nil)
        #expect(Set(keys).count == keys.count, "a fresh key per frame")
        _ = try? server.finish()
        _ = try? channel.finish()
    }
}
