import NIOCore
import NIOWebSocket

/// WebSocket masking (RFC 6455 §5.3) a machine word at a time: owns the XOR of a frame's
/// payload with its 4-byte key, both ways (masking is its own inverse).
///
/// SwiftNIO's `ByteBuffer.webSocketMask` goes a byte at a time with a modulo per byte,
/// about 20 instructions a byte. A node that dials masks every byte it sends, and the node
/// it dialed unmasks every one: in a two-process push that was a fifth of the pushing
/// process's instructions and an eighth of the receiving one's (Benchmarks/JOURNAL.md).
enum WebSocketMask {
    /// XORs the readable bytes of `buffer` with `key`; its first byte takes the key's byte
    /// `indexOffset % 4` (an application payload that follows `indexOffset` bytes of
    /// extension data).
    static func apply(_ key: WebSocketMaskingKey, to buffer: inout ByteBuffer, indexOffset: Int = 0) {
        guard buffer.readableBytes > 0 else { return }
        buffer.withUnsafeMutableReadableBytes { apply(key, to: $0, indexOffset: indexOffset) }
    }

    /// XORs `bytes` with `key`, starting at the key's byte `indexOffset % 4`.
    static func apply(_ key: WebSocketMaskingKey, to bytes: UnsafeMutableRawBufferPointer, indexOffset: Int) {
        let shift = indexOffset & 3
        // The key as it lines up with the first byte, twice over: byte i of the word masks
        // every payload byte at an offset ≡ i (mod 8).
        var pattern: UInt64 = 0
        withUnsafeMutableBytes(of: &pattern) { word in
            for i in 0..<8 { word[i] = key[(i + shift) & 3] }
        }
        let count = bytes.count
        var offset = 0
        while offset + 8 <= count {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            bytes.storeBytes(of: word ^ pattern, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        withUnsafeBytes(of: pattern) { word in
            while offset < count {
                bytes[offset] ^= word[offset & 7]
                offset += 1
            }
        }
    }
}

extension WebSocketFrame {
    /// The application data unmasked (`unmaskedData`, by `WebSocketMask`).
    var unmaskedPayload: ByteBuffer {
        guard let key = maskKey else { return data }
        var payload = data
        WebSocketMask.apply(key, to: &payload, indexOffset: (extensionData?.readableBytes ?? 0) % 4)
        return payload
    }
}
