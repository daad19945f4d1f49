/// A bounds-checked cursor over bytes for decoding binary forms; owns the
/// read position. Every read returns nil instead of running past the end.
struct ByteReader {
    let buffer: UnsafeBufferPointer<UInt8>
    var position = 0

    init(_ buffer: UnsafeBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    var remaining: Int { buffer.count - position }

    mutating func readByte() -> UInt8? {
        guard position < buffer.count else { return nil }
        defer { position += 1 }
        return buffer[position]
    }

    /// An unsigned LEB128 varint of at most 10 bytes that fits `UInt64`.
    mutating func readVarint() -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard let byte = readByte() else { return nil }
            let bits = UInt64(byte & 0x7F)
            if shift == 63 && bits > 1 { return nil }
            result |= bits << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { return nil }
        }
    }

    mutating func readBytes(_ count: Int) -> UnsafeBufferPointer<UInt8>? {
        guard count >= 0, count <= remaining else { return nil }
        defer { position += count }
        return UnsafeBufferPointer(rebasing: buffer[position..<position + count])
    }
}
