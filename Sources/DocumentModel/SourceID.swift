/// The 128-bit identity of whoever created a `Version` (a Shoal node, a Couchbase Lite
/// database, a Sync Gateway bucket); owns its text form and its order.
///
/// Text form, as Couchbase Lite 4 (`LiteCore/RevTrees/Version.cc`, `SourceID::asASCII`)
/// and Sync Gateway 4 (`base/util.go`, `HexToBase64` with `RawStdEncoding`) write it:
/// the 16 bytes in standard base64 (`A–Z a–z 0–9 + /`) without the `==` padding, so
/// always 22 characters. The last character carries only 2 bits, so it must be one of
/// `A Q g w`: any other spelling would decode to the same bytes and is rejected, as
/// Couchbase Lite rejects it. The all-zero ID is Couchbase Lite's "me" placeholder
/// (written `*`); it is never a valid source in an absolute version.
/// Order (`<`) is the bytes compared lexicographically, as `SourceID::operator<`.
public struct SourceID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The first 8 bytes, big-endian.
    public let high: UInt64
    /// The last 8 bytes, big-endian.
    public let low: UInt64

    /// Length of the text form.
    public static let textLength = 22

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The ID made of exactly 16 bytes; nil for any other count.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (i, byte) in bytes.enumerated() {
            if i < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    /// Couchbase Lite's placeholder for the local peer (`kMeSourceID`, text `*`).
    public static let me = SourceID(high: 0, low: 0)

    /// The source of versions derived from revision-tree IDs (`kLegacyRevSourceID` in
    /// `SourceID.hh`, `encodedRevTreeSourceID` in Sync Gateway's
    /// `db/hybrid_logical_vector.go`): text `Revision+Tree+Encoding`.
    public static let revisionTreeEncoding = SourceID(base64: "Revision+Tree+Encoding")!

    /// Whether this is the all-zero placeholder.
    public var isMe: Bool { high == 0 && low == 0 }

    /// The 16 bytes.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// Parses the 22-character unpadded base64 form; nil when it is not exactly that
    /// (wrong length, a character outside the alphabet, a non-canonical last character).
    /// The all-zero ID parses; `Version` rejects it as a source.
    public init?(base64 text: some StringProtocol) {
        guard let decoded = Array(text.utf8).withUnsafeBufferPointer({ Self.decode(base64: $0) }) else { return nil }
        self = decoded
    }

    /// Decodes exactly `textLength` base64 characters into the two words: 10 characters
    /// and 4 bits of the 11th make `high`, its last 2 bits, 10 characters and 2 bits of
    /// the 22nd make `low`; the 22nd's last 4 bits must be 0. Nil for any other text.
    static func decode(base64 utf8: UnsafeBufferPointer<UInt8>) -> SourceID? {
        guard utf8.count == textLength else { return nil }
        return sextets.withUnsafeBufferPointer { table -> SourceID? in
            var invalid: UInt8 = 0  // any character outside the alphabet sets bit 7
            func sextet(_ i: Int) -> UInt64 {
                let value = table[Int(utf8[i])]
                invalid |= value
                return UInt64(value & 0x3F)
            }
            var high: UInt64 = 0
            for i in 0..<10 { high = high << 6 | sextet(i) }
            let eleventh = sextet(10)
            high = high << 4 | eleventh >> 2
            var low = eleventh & 0x3
            for i in 11..<21 { low = low << 6 | sextet(i) }
            let last = sextet(21)
            guard invalid & 0x80 == 0, last & 0x0F == 0 else { return nil }
            return SourceID(high: high, low: low << 2 | last >> 4)
        }
    }

    /// The 22-character unpadded base64 form.
    public var base64: String {
        let bytes = self.bytes
        var out = [UInt8]()
        out.reserveCapacity(Self.textLength)
        var i = 0
        while i < 15 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            for shift in [18, 12, 6, 0] { out.append(Self.alphabet[Int(n >> UInt32(shift) & 0x3F)]) }
            i += 3
        }
        let last = UInt32(bytes[15]) << 16
        out.append(Self.alphabet[Int(last >> 18 & 0x3F)])
        out.append(Self.alphabet[Int(last >> 12 & 0x3F)])
        return String(decoding: out, as: UTF8.self)
    }

    public var description: String { base64 }

    public static func < (a: SourceID, b: SourceID) -> Bool {
        a.high != b.high ? a.high < b.high : a.low < b.low
    }

    /// The source of a version derived from a revision ID (a deterministic
    /// resolution revision, docs/architecture.md "Version vectors"): the first 16
    /// bytes of SHA-1 over `shoal-version\0` and the revision ID's text. Never `me`.
    public static func derived(fromRevID revID: RevID) -> SourceID {
        var sha = SHA1()
        sha.update(Array("shoal-version\0".utf8))
        sha.update(Array(revID.description.utf8))
        let id = SourceID(bytes: sha.finalize().prefix(16))!
        return id.isMe ? SourceID(high: 0, low: 1) : id
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Each byte's value in the alphabet; 0xFF for a byte outside it.
    static let sextets: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }()
}
