import CZlib

/// The running CRC-32 (IEEE, as zlib computes it) of all frame data sent or received
/// so far in one direction. The initial value is 0, like zlib's `crc32(0, NULL, 0)`.
struct RunningCRC32: Sendable, Equatable {
    private(set) var value: UInt32 = 0

    /// Folds `bytes` into the checksum.
    mutating func update(_ bytes: ArraySlice<UInt8>) {
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var crc = UInt(value)
            var start = base
            var remaining = buffer.count
            // zlib takes a 32-bit length; feed very large inputs in pieces.
            while remaining > 0 {
                let chunk = min(remaining, 1 << 30)
                crc = UInt(crc32(uLong(crc), start, uInt(chunk)))
                start += chunk
                remaining -= chunk
            }
            value = UInt32(truncatingIfNeeded: crc)
        }
    }

    /// Folds `bytes` into the checksum.
    mutating func update(_ bytes: [UInt8]) {
        update(bytes[...])
    }
}
