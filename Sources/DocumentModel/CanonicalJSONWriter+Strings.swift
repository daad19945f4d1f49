// String output with the minimal escapes of canonical JSON.

extension CanonicalJSONWriter {
    mutating func writeString(_ s: String) {
        append(UInt8(ascii: "\""))
        let done: Void? = s.utf8.withContiguousStorageIfAvailable { writeEscaped($0) }
        if done == nil {
            let bytes = Array(s.utf8)
            bytes.withUnsafeBufferPointer { writeEscaped($0) }
        }
        append(UInt8(ascii: "\""))
    }

    mutating func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>) {
        // Enough for the common case without escapes; escapes grow as needed.
        reserve(bytes.count)
        guard let base = bytes.baseAddress else { return }
        var runStart = 0
        var i = 0
        let n = bytes.count
        while i < n {
            // Eight bytes at a time while none needs an escape.
            if i &+ 8 <= n, !ByteWord.hasEscape(ByteWord.load(base, at: i)) {
                i &+= 8
                continue
            }
            let b = bytes[i]
            if b >= 0x20 && b != 0x22 && b != 0x5C {
                i &+= 1
                continue
            }
            if runStart < i { append(UnsafeBufferPointer(rebasing: bytes[runStart..<i])) }
            switch b {
            case 0x22: append(UInt8(ascii: "\\"), UInt8(ascii: "\""))
            case 0x5C: append(UInt8(ascii: "\\"), UInt8(ascii: "\\"))
            case 0x08: append(UInt8(ascii: "\\"), UInt8(ascii: "b"))
            case 0x0C: append(UInt8(ascii: "\\"), UInt8(ascii: "f"))
            case 0x0A: append(UInt8(ascii: "\\"), UInt8(ascii: "n"))
            case 0x0D: append(UInt8(ascii: "\\"), UInt8(ascii: "r"))
            case 0x09: append(UInt8(ascii: "\\"), UInt8(ascii: "t"))
            default:
                appendASCII("\\u00")
                append(CanonicalJSONWriter.hexDigit(b >> 4), CanonicalJSONWriter.hexDigit(b & 0x0F))
            }
            i &+= 1
            runStart = i
        }
        if runStart < n { append(UnsafeBufferPointer(rebasing: bytes[runStart..<n])) }
    }

    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 &+ nibble : 0x57 &+ nibble
    }
}
