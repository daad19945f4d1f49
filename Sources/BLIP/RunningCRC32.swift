import CCRC32

/// The running CRC-32 (IEEE, as zlib computes it) of all frame data sent or received
/// so far in one direction. The initial value is 0, like zlib's `crc32(0, NULL, 0)`.
/// Computed by `shoal_crc32` (Sources/CCRC32): folded with PCLMULQDQ, where the CPU has
/// it, at about a tenth of zlib's instructions per byte; zlib's otherwise.
struct RunningCRC32: Sendable, Equatable {
    private(set) var value: UInt32 = 0

    /// Folds `bytes` into the checksum.
    mutating func update(_ bytes: ArraySlice<UInt8>) {
        guard !bytes.isEmpty else { return }
        value = bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return value }
            return shoal_crc32(value, base, buffer.count)
        }
    }

    /// Folds `bytes` into the checksum.
    mutating func update(_ bytes: [UInt8]) {
        update(bytes[...])
    }
}
