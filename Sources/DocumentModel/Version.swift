/// One entry of a version vector: a hybrid logical time and the source that wrote it;
/// owns the text form `<time>@<source>` and the versions derived from revision IDs.
///
/// Text form, as Couchbase Lite 4 (`LiteCore/RevTrees/Version.cc`) and Sync Gateway 4
/// (`db/hybrid_logical_vector.go`, `Version.String`) write it: the time in lowercase
/// hex without leading zeros, `@`, the source's 22-character base64 form. Parsing is
/// exactly that (no upper case, no leading zero, no zero time, no all-zero source),
/// so the text and the value are one-to-one; Couchbase Lite's relative form `…@*`
/// parses only when the caller says which source `*` stands for.
public struct Version: Sendable, Hashable, CustomStringConvertible {
    /// Hybrid logical time: nanoseconds since 1970 in the high 48 bits, a counter in
    /// the low 16 (`HybridLogicalClock`). Never 0.
    public let time: UInt64
    public let source: SourceID

    /// A version from trusted parts. `time` must not be 0.
    public init(time: UInt64, source: SourceID) {
        precondition(time != 0, "a version's time is never 0")
        self.time = time
        self.source = source
    }

    /// Parses `<hex time>@<source>`; `@*` is accepted when `localSource` is given.
    public init(parsing text: some StringProtocol, localSource: SourceID? = nil) throws(VersionVectorError) {
        try self.init(parsingAny: text, localSource: localSource)
    }

    /// `init(parsing:)` of a `String`, specialized for callers in other modules (see
    /// `VersionVector.init(parsing:)` of a `String`).
    public init(parsing text: String, localSource: SourceID? = nil) throws(VersionVectorError) {
        if let version = Self.canonical(text) {
            self = version
            return
        }
        try self.init(parsingAny: text, localSource: localSource)
    }

    /// `text` when it is one absolute version (`<hex time>@<22 base64 characters>`, the
    /// form nearly every stored or sent version has), parsed by `init(utf8:…)` straight
    /// from the string's UTF-8; nil for anything else, which the general parser then
    /// reads (and says what is wrong with it).
    static func canonical(_ text: String) -> Version? {
        var utf8 = text
        return utf8.withUTF8 { bytes in try? Version(utf8: bytes, text: text, localSource: nil) }
    }

    private init(parsingAny text: some StringProtocol, localSource: SourceID?) throws(VersionVectorError) {
        // The bytes in place (a native string's or substring's storage); a copy otherwise.
        let parsed = text.utf8.withContiguousStorageIfAvailable { bytes in
            Result { () throws(VersionVectorError) in try Version(utf8: bytes, text: text, localSource: localSource) }
        } ?? Result { () throws(VersionVectorError) in
            try Array(text.utf8).withUnsafeBufferPointer { bytes throws(VersionVectorError) in
                try Version(utf8: bytes, text: text, localSource: localSource)
            }
        }
        self = try parsed.get()
    }

    private init(utf8: UnsafeBufferPointer<UInt8>, text: some StringProtocol, localSource: SourceID?) throws(VersionVectorError) {
        var string: String { String(text) }
        guard let at = utf8.firstIndex(of: UInt8(ascii: "@")) else { throw .malformedVersion(string, "no '@'") }
        let hex = utf8[..<at]
        guard !hex.isEmpty else { throw .malformedVersion(string, "no time before '@'") }
        guard hex.count <= 16 else { throw .malformedVersion(string, "time longer than 16 hex digits") }
        guard hex.first != UInt8(ascii: "0") else {
            throw .malformedVersion(string, hex.count == 1 ? "time is 0" : "time has a leading zero")
        }
        var time: UInt64 = 0
        for c in hex {
            let digit: UInt64
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt64(c - UInt8(ascii: "a") + 10)
            default: throw .malformedVersion(string, "time is not lowercase hex")
            }
            time = time << 4 | digit
        }
        let sourceText = utf8[(at + 1)...]
        if sourceText.elementsEqual("*".utf8) {
            guard let localSource, !localSource.isMe else { throw .relativeSource(string) }
            self.init(time: time, source: localSource)
            return
        }
        guard let source = SourceID.decode(base64: UnsafeBufferPointer(rebasing: sourceText)) else {
            throw .invalidSourceID(String(decoding: sourceText, as: UTF8.self))
        }
        guard !source.isMe else { throw .invalidSourceID(String(decoding: sourceText, as: UTF8.self)) }
        self.init(time: time, source: source)
    }

    public var description: String { String(time, radix: 16) + "@" + source.base64 }

    /// The text form with `*` in place of `localSource` (Couchbase Lite's relative form).
    public func text(abbreviating localSource: SourceID?) -> String {
        source == localSource ? String(time, radix: 16) + "@*" : description
    }

    /// Canonical order of the merge and previous versions in a vector: newer first,
    /// equal times by ascending source (`Version::byDescendingTimes` in `Version.hh`).
    public static func precedesInVector(_ a: Version, _ b: Version) -> Bool {
        a.time != b.time ? a.time > b.time : a.source < b.source
    }

    /// The version Couchbase Lite 4 and Sync Gateway 4 give a revision-tree revision
    /// (`Version::legacyVersion` in `Version.cc`, `LegacyRevToRevTreeEncodedVersion`
    /// in `hybrid_logical_vector.go`): source `Revision+Tree+Encoding`; time = the
    /// generation in the high 24 bits (higher bits of larger generations are lost, as
    /// there) and the first 40 bits of the digest in the low 40 (a hex digest's first
    /// 10 digits, right-padded with `0`). A digest that is not hex (Shoal accepts any
    /// letters and digits, Couchbase does not) uses the first 40 bits of its SHA-1.
    public static func legacy(revID: RevID) -> Version {
        var bits: UInt64 = 0
        let digest = Array(revID.digest.utf8)
        if digest.allSatisfy({ hexValue($0) != nil }) {
            for i in 0..<10 { bits = bits << 4 | UInt64(i < digest.count ? hexValue(digest[i])! : 0) }
        } else {
            for byte in SHA1.hash(digest).prefix(5) { bits = bits << 8 | UInt64(byte) }
        }
        let time = UInt64(truncatingIfNeeded: revID.generation) << 40 | bits
        return Version(time: time == 0 ? 1 : time, source: .revisionTreeEncoding)
    }

    /// The version of a revision every node writes alike (a deterministic conflict
    /// resolution or its tombstones, docs/architecture.md "Version vectors"): source
    /// `SourceID.derived(fromRevID:)`, time one past `after` (the newest time in the
    /// vectors it descends from), so it sorts after everything it merges.
    public static func derived(revID: RevID, after: UInt64) -> Version {
        Version(time: after == .max ? .max : after + 1, source: .derived(fromRevID: revID))
    }

    /// Whether this version is the encoding of a revision-tree ID.
    public var isLegacy: Bool { source == .revisionTreeEncoding }

    /// The generation a legacy version encodes (the high 24 bits of its time).
    public var legacyGeneration: Int { Int(time >> 40) }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
