/// Unsigned LEB128 varints as BLIP uses them (message numbers, flags, property
/// lengths, ACK byte counts): 7 bits per byte, least significant group first, high
/// bit set on every byte but the last. At most 10 bytes for a 64-bit value.
public enum BLIPVarint: Sendable {
    /// The longest encoding of a `UInt64`.
    public static let maxLength = 10

    /// Why a varint could not be read.
    public enum DecodeError: Error, Sendable, Equatable {
        /// The input ended in the middle of the varint (or was empty).
        case truncated
        /// The value does not fit in 64 bits (or uses more than 10 bytes).
        case overflow
    }

    /// Appends the encoding of `value` to `bytes`.
    @inlinable
    public static func encode(_ value: UInt64, into bytes: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// The encoding of `value`.
    @inlinable
    public static func encode(_ value: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encodedLength(value))
        encode(value, into: &bytes)
        return bytes
    }

    /// Number of bytes `encode` writes for `value`.
    @inlinable
    public static func encodedLength(_ value: UInt64) -> Int {
        var v = value
        var n = 1
        while v >= 0x80 {
            v >>= 7
            n += 1
        }
        return n
    }

    /// Reads a varint at the start of `bytes`: the value and the number of bytes used.
    @inlinable
    public static func decode<C: Collection<UInt8>>(_ bytes: C) throws(DecodeError) -> (value: UInt64, length: Int) {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var length = 0
        for byte in bytes {
            length += 1
            let group = UInt64(byte & 0x7F)
            if shift == 63 && group > 1 {
                throw .overflow
            }
            result |= group << shift
            if byte & 0x80 == 0 {
                return (result, length)
            }
            shift += 7
            if shift > 63 {
                throw .overflow
            }
        }
        throw .truncated
    }
}
