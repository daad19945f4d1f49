/// Incremental SHA-1 (FIPS 180-4), pure Swift; owns the chaining state and a
/// partial 64-byte block.
///
/// Used for revision digests and attachment digests, not for security.
public struct SHA1: Sendable {
    var h0: UInt32 = 0x6745_2301
    var h1: UInt32 = 0xEFCD_AB89
    var h2: UInt32 = 0x98BA_DCFE
    var h3: UInt32 = 0x1032_5476
    var h4: UInt32 = 0xC3D2_E1F0
    /// Bytes of the current partial block (64 bytes of storage).
    var block: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// How many bytes of `block` are filled (0..<64).
    var blockCount = 0
    /// Total message length in bytes.
    var length: UInt64 = 0

    public init() {}

    /// Feeds bytes into the hash.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var src = bytes.baseAddress, !bytes.isEmpty else { return }
        var remaining = bytes.count
        length &+= UInt64(remaining)

        if blockCount > 0 {
            let take = min(64 - blockCount, remaining)
            let filled = blockCount
            withUnsafeMutableBytes(of: &block) { dst in
                (dst.baseAddress! + filled).copyMemory(from: src, byteCount: take)
            }
            blockCount += take
            src += take
            remaining -= take
            if blockCount < 64 { return }
            var copy = block
            withUnsafeBytes(of: &copy) { compress($0.baseAddress!, blocks: 1) }
            blockCount = 0
        }
        let whole = remaining / 64
        if whole > 0 {
            compress(src, blocks: whole)
            src += whole * 64
            remaining -= whole * 64
        }
        if remaining > 0 {
            withUnsafeMutableBytes(of: &block) { dst in
                dst.baseAddress!.copyMemory(from: src, byteCount: remaining)
            }
            blockCount = remaining
        }
    }

    /// Feeds bytes into the hash; contiguous collections take the fast path.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done != nil { return }
        var chunk = [UInt8]()
        chunk.reserveCapacity(4096)
        for byte in bytes {
            chunk.append(byte)
            if chunk.count == 4096 {
                chunk.withUnsafeBytes { update($0) }
                chunk.removeAll(keepingCapacity: true)
            }
        }
        chunk.withUnsafeBytes { update($0) }
    }

    /// The 20-byte digest of everything fed so far. The state is left as it was,
    /// so calling it again gives the same digest and further updates continue the message.
    public mutating func finalize() -> [UInt8] {
        var copy = self
        let bitLength = length &* 8
        // 0x80, zeros up to 56 mod 64, then the 64-bit big-endian bit length.
        let padCount = blockCount < 56 ? 56 - blockCount : 120 - blockCount
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: padCount + 8) { padding in
            padding.initialize(repeating: 0)
            padding[0] = 0x80
            for i in 0..<8 {
                padding[padCount + i] = UInt8(truncatingIfNeeded: bitLength >> (56 - 8 * UInt64(i)))
            }
            copy.update(UnsafeRawBufferPointer(padding))
        }
        return [UInt8](unsafeUninitializedCapacity: 20) { digest, initialized in
            for (i, word) in [copy.h0, copy.h1, copy.h2, copy.h3, copy.h4].enumerated() {
                digest[i * 4] = UInt8(truncatingIfNeeded: word >> 24)
                digest[i * 4 + 1] = UInt8(truncatingIfNeeded: word >> 16)
                digest[i * 4 + 2] = UInt8(truncatingIfNeeded: word >> 8)
                digest[i * 4 + 3] = UInt8(truncatingIfNeeded: word)
            }
            initialized = 20
        }
    }

    /// The 20-byte SHA-1 digest of `bytes`.
    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var sha = SHA1()
        sha.update(bytes)
        return sha.finalize()
    }
}
