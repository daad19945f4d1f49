/// A revision ID `generation-digest` (ARCHITECTURE.md §2); owns its parsing,
/// its ordering and the deterministic computation of new IDs.
///
/// Ordering (`<`) is the winner order ignoring deletion: generation first, then
/// the digest compared as UTF-8 bytes. The greater ID wins.
public struct RevID: Sendable, Hashable, Comparable, CustomStringConvertible, LosslessStringConvertible {
    public let generation: Int
    public let digest: String

    /// Longest accepted digest.
    public static let maxDigestLength = 128

    /// Parses and validates `generation-digest`: the generation is decimal
    /// 1...Int32.max without sign or leading zeros (`0-N` local revisions are not
    /// revision IDs), the digest 1...128 ASCII letters or digits.
    public init?(_ string: String) {
        var generation = 0
        var digestStart = -1
        let parsed: Bool? = string.utf8.withContiguousStorageIfAvailable { bytes in
            RevID.parse(bytes, generation: &generation, digestStart: &digestStart)
        }
        let ok: Bool
        if let parsed {
            ok = parsed
        } else {
            ok = Array(string.utf8).withUnsafeBufferPointer {
                RevID.parse($0, generation: &generation, digestStart: &digestStart)
            }
        }
        guard ok else { return nil }
        let utf8 = string.utf8
        self.generation = generation
        self.digest = String(utf8[utf8.index(utf8.startIndex, offsetBy: digestStart)...])!
    }

    /// A revision ID from trusted parts; nothing is validated.
    public init(generation: Int, digest: String) {
        self.generation = generation
        self.digest = digest
    }

    /// Whether `digest` is a valid revision digest: 1...128 ASCII letters or digits.
    public static func isValidDigest(_ digest: some StringProtocol) -> Bool {
        let utf8 = digest.utf8
        guard !utf8.isEmpty, utf8.count <= maxDigestLength else { return false }
        return utf8.allSatisfy(isAlphanumeric)
    }

    @inline(__always)
    static func isAlphanumeric(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A)
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, generation: inout Int,
                              digestStart: inout Int) -> Bool {
        var i = 0
        var gen = 0
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
            if i == 0 && bytes[i] == 0x30 { return false }   // leading zero, or generation 0
            gen = gen * 10 + Int(bytes[i] - 0x30)
            if gen > Int(Int32.max) { return false }
            i += 1
        }
        guard i > 0, i < bytes.count, bytes[i] == UInt8(ascii: "-") else { return false }
        i += 1
        let digestLength = bytes.count - i
        guard digestLength >= 1, digestLength <= maxDigestLength else { return false }
        for j in i..<bytes.count where !isAlphanumeric(bytes[j]) { return false }
        generation = gen
        digestStart = i
        return true
    }

    public var description: String { "\(generation)-\(digest)" }

    public static func < (a: RevID, b: RevID) -> Bool {
        if a.generation != b.generation { return a.generation < b.generation }
        return CanonicalJSONWriter.utf8Precedes(a.digest, b.digest)
    }

    /// Deterministic revision ID (ARCHITECTURE.md §2): generation is the parent's
    /// plus one (1 without parent); the digest is the lowercase hex SHA-1 of the
    /// parent ID's UTF-8 length as one byte and its bytes (a single 0 byte when
    /// there is no parent), one byte 1/0 for `deleted`, then `canonicalBody`
    /// (see `RevisionBody.digestBody`). Valid parent IDs are at most 139 bytes;
    /// a longer trusted ID has its length byte truncated to the low 8 bits.
    public static func compute(parent: RevID?, deleted: Bool, canonicalBody: [UInt8]) -> RevID {
        compute(parent: parent, deleted: deleted, canonicalBody: canonicalBody, using: SHA1.self)
    }

    /// `compute(parent:deleted:canonicalBody:)` with another SHA-1 implementation (the
    /// same digest, faster where the CPU has SHA instructions).
    public static func compute<Hash: SHA1Hashing>(
        parent: RevID?, deleted: Bool, canonicalBody: [UInt8], using _: Hash.Type
    ) -> RevID {
        var sha = Hash()
        if let parent {
            var text = parent.description
            sha.update(byte: UInt8(truncatingIfNeeded: text.utf8.count))
            text.withUTF8 { sha.update(UnsafeRawBufferPointer($0)) }
        } else {
            sha.update(byte: 0)
        }
        sha.update(byte: deleted ? 1 : 0)
        canonicalBody.withUnsafeBytes { sha.update($0) }
        return RevID(generation: (parent?.generation ?? 0) + 1, digest: Digests.hex(sha.finalize()))
    }
}
