import Foundation

/// Digest formatting helpers: lowercase hex and Couchbase attachment digests.
public enum Digests: Sendable {
    /// Lowercase hexadecimal, two characters per byte.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let fast: String? = bytes.withContiguousStorageIfAvailable { hex(buffer: $0) }
        if let fast { return fast }
        return Array(bytes).withUnsafeBufferPointer { hex(buffer: $0) }
    }

    static func hex(buffer: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: buffer.count * 2) { out in
            var i = 0
            for byte in buffer {
                out[i] = hexDigit(byte >> 4)
                out[i + 1] = hexDigit(byte & 0x0F)
                i += 2
            }
            return i
        }
    }

    /// `"sha1-"` followed by the standard base64 (with padding) of a SHA-1
    /// digest, the attachment digest format of Couchbase.
    public static func attachmentDigest(sha1 bytes: [UInt8]) -> String {
        "sha1-" + Data(bytes).base64EncodedString()
    }

    /// The attachment digest of some content.
    public static func attachmentDigest(of content: some Sequence<UInt8>) -> String {
        attachmentDigest(sha1: SHA1.hash(content))
    }

    /// Bytes from lowercase or uppercase hex; nil if the length is odd or a character is not hex.
    public static func bytes(fromHex hex: String) -> [UInt8]? {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let high = hexValue(utf8[i]), let low = hexValue(utf8[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 &+ nibble : 0x57 &+ nibble
    }

    @inline(__always)
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c &- 0x30
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c &- 0x57
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c &- 0x37
        default: return nil
        }
    }
}
