import NIOCore
import NIOWebSocket
import Testing
import TestSupport

@testable import BLIP

/// `WebSocketMask` against SwiftNIO's byte-at-a-time `webSocketMask`: every length
/// around the word size and every key offset, and a frame's payload unmasked.
@Suite struct WebSocketMaskTests {
    @Test func masksLikeNIOAtEveryLengthAndOffset() {
        var rng = SplitMix64(seed: 5)
        for length in Array(0...40) + [127, 1_000, 4_099] {
            for offset in 0..<8 {
                let key = WebSocketMaskingKey((0..<4).map { _ in UInt8(truncatingIfNeeded: rng.next()) })!
                let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                var expected = ByteBuffer(bytes: bytes)
                expected.webSocketMask(key, indexOffset: offset)
                var masked = ByteBuffer(bytes: bytes)
                WebSocketMask.apply(key, to: &masked, indexOffset: offset)
                #expect(masked == expected, "length \(length), offset \(offset)")
                WebSocketMask.apply(key, to: &masked, indexOffset: offset)
                #expect(Array(masked.readableBytesView) == bytes, "masking twice gives the bytes back")
            }
        }
    }

    @Test func masksOnlyTheReadableBytes() {
        var buffer = ByteBuffer(bytes: [9, 9, 1, 2, 3, 4, 5])
        buffer.moveReaderIndex(forwardBy: 2)
        let key: WebSocketMaskingKey = [0xFF, 0x00, 0xFF, 0x00]
        WebSocketMask.apply(key, to: &buffer)
        #expect(Array(buffer.readableBytesView) == [0xFE, 2, 0xFC, 4, 0xFA])
        buffer.moveReaderIndex(to: 0)
        #expect(Array(buffer.readableBytesView.prefix(2)) == [9, 9])
    }

    @Test func unmaskedPayloadIsNIOsUnmaskedData() {
        let key: WebSocketMaskingKey = [1, 2, 3, 4]
        var data = ByteBuffer(bytes: Array(0..<37))
        data.webSocketMask(key)
        let frame = WebSocketFrame(fin: true, opcode: .binary, maskKey: key, data: data)
        #expect(frame.unmaskedPayload == frame.unmaskedData)
        #expect(Array(frame.unmaskedPayload.readableBytesView) == Array(0..<37))
        let plain = WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: [7, 8]))
        #expect(plain.unmaskedPayload == plain.data)
    }
}
