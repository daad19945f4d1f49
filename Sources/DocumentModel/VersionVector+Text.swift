// The text forms of a version vector, as Couchbase Lite 4 and Sync Gateway 4 write them.
//
// Couchbase Lite (`VersionVector::writeASCII`/`readASCII` in LiteCore/RevTrees/VersionVector.cc):
//   `cv, mv1, mv2; pv1, pv2`  — `, ` between versions, `; ` before the first previous
//   version; a merge without previous versions ends in `;` (`cv, mv1, mv2;`); without any
//   `;` every version is current or merge. Spaces after a separator are optional.
// Sync Gateway (`HLVDebugString`, `extractHLVFromBlipString` in db/hybrid_logical_vector.go):
//   the same grammar without spaces: `cv,mv1,mv2;pv1,pv2`, `cv;pv`, `cv,mv;`.
// Revision-tree IDs may end a history (`cv; pv, 3-abc, 2-def`: `VersionVecWithLegacy` in
// VersionVectorWithLegacy.hh, cases 5–10 of `extractHLVFromBlipString`): always after every
// version and after the `;`, newest first.
// A `rev` message (Pusher+Revs.cc, RevToInsert::history in ReplicatorTypes.cc,
// GetHLVFromRevMessage in db/blip_handler.go) carries the current version in `rev` and the
// rest in `history` with the current version and its separator cut off: `mv1, mv2; pv1` or
// `pv1, pv2` (no `;`: all previous). The receiver glues them back with `,` when `history`
// holds a `;` and with `;` otherwise.

extension VersionVector {
    /// The separators a text form uses.
    public enum TextStyle: Sendable {
        /// `, ` and `; ` (Couchbase Lite).
        case couchbaseLite
        /// `,` and `;` (Sync Gateway).
        case syncGateway

        var comma: String { self == .couchbaseLite ? ", " : "," }
        var semicolon: String { self == .couchbaseLite ? "; " : ";" }
    }

    /// Parses a whole vector in either style. Revision IDs are refused.
    public init(parsing text: some StringProtocol, localSource: SourceID? = nil) throws(VersionVectorError) {
        self = try Self.parseVector(text, localSource: localSource)
    }

    /// `init(parsing:)` of a `String`. The `String` entry points exist for callers in
    /// other modules: there a generic one runs unspecialized, through witness tables
    /// (7 µs for one version in a release build, against well under 1 µs specialized).
    public init(parsing text: String, localSource: SourceID? = nil) throws(VersionVectorError) {
        // One version in its canonical form (a revision written once): no lists, no
        // substrings (`Version.canonical`).
        if let version = Version.canonical(text) {
            self.init(version)
            return
        }
        self = try Self.parseVector(text, localSource: localSource)
    }

    private static func parseVector(_ text: some StringProtocol, localSource: SourceID?) throws(VersionVectorError) -> VersionVector {
        let (vector, legacy) = try parseAnyHistory(text, localSource: localSource)
        if let first = legacy.first { throw .misplacedRevID(first.description) }
        return vector
    }

    /// Parses a whole vector that may end with revision-tree IDs (newest first).
    public static func parseHistory(_ text: some StringProtocol, localSource: SourceID? = nil)
        throws(VersionVectorError) -> (vector: VersionVector, legacy: [RevID])
    {
        try parseAnyHistory(text, localSource: localSource)
    }

    /// `parseHistory` of a `String` (see `init(parsing:)` of a `String`).
    public static func parseHistory(_ text: String, localSource: SourceID? = nil)
        throws(VersionVectorError) -> (vector: VersionVector, legacy: [RevID])
    {
        try parseAnyHistory(text, localSource: localSource)
    }

    private static func parseAnyHistory(_ text: some StringProtocol, localSource: SourceID?)
        throws(VersionVectorError) -> (vector: VersionVector, legacy: [RevID])
    {
        // One version and nothing else (what a revision written once carries): no lists.
        if !text.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: ";") }) {
            return (try single(text, localSource: localSource), [])
        }
        let string = String(text)
        var entries = [Substring]()
        var semicolonAt: Int?
        var start = string.startIndex
        var index = string.startIndex
        func take(_ end: String.Index) throws(VersionVectorError) {
            let entry = string[start..<end].drop(while: { $0 == " " })
            guard !entry.isEmpty else { throw .emptyEntry(string) }
            entries.append(entry)
        }
        while index < string.endIndex {
            let c = string.utf8[index]
            if c == UInt8(ascii: ",") || c == UInt8(ascii: ";") {
                try take(index)
                if c == UInt8(ascii: ";") {
                    guard semicolonAt == nil else { throw .multipleSemicolons(string) }
                    semicolonAt = entries.count
                }
                start = string.utf8.index(after: index)
            }
            index = string.utf8.index(after: index)
        }
        if string.isEmpty { throw .empty }
        let endsAfterSemicolon = semicolonAt == entries.count && string[start...].allSatisfy { $0 == " " }
        if !endsAfterSemicolon { try take(string.endIndex) }
        // Trailing revision IDs are the legacy history; nothing else may be one.
        var firstLegacy = entries.count
        while firstLegacy > 1, !entries[firstLegacy - 1].utf8.contains(UInt8(ascii: "@")), let _ = RevID(String(entries[firstLegacy - 1])) {
            firstLegacy -= 1
        }
        if let semicolonAt, semicolonAt > firstLegacy { throw .misplacedRevID(String(entries[firstLegacy])) }
        var versions = [Version]()
        for entry in entries[..<firstLegacy] {
            if !entry.utf8.contains(UInt8(ascii: "@")), RevID(String(entry)) != nil { throw .misplacedRevID(String(entry)) }
            versions.append(try Version(parsing: entry, localSource: localSource))
        }
        let currentCount = min(semicolonAt ?? versions.count, versions.count)
        let vector = try VersionVector(current: versions[0], merges: Array(versions[1..<currentCount]),
                                       previous: Array(versions[currentCount...]))
        return (vector, entries[firstLegacy...].map { RevID(String($0))! })
    }

    /// `parseHistory` of a text without separators: one version (leading spaces
    /// allowed), with the same errors the general path gives.
    private static func single(_ text: some StringProtocol, localSource: SourceID?) throws(VersionVectorError) -> VersionVector {
        guard !text.isEmpty else { throw .empty }
        let entry = text.drop(while: { $0 == " " })
        guard !entry.isEmpty else { throw .emptyEntry(String(text)) }
        if !entry.utf8.contains(UInt8(ascii: "@")), RevID(String(entry)) != nil { throw .misplacedRevID(String(entry)) }
        return VersionVector(try Version(parsing: entry, localSource: localSource))
    }

    /// Parses the `rev` and `history` properties of a `rev` message (CBMobile_4).
    public static func parseRevMessage(rev: String, history: String?, localSource: SourceID? = nil)
        throws(VersionVectorError) -> (vector: VersionVector, legacy: [RevID])
    {
        let current = try Version(parsing: rev, localSource: localSource)
        guard let history, !history.isEmpty else { return (VersionVector(current), []) }
        let glue = history.contains(";") ? ", " : "; "
        return try parseAnyHistory(current.text(abbreviating: nil) + glue + history, localSource: localSource)
    }

    /// The whole vector in Couchbase Lite's style.
    public var description: String { text() }

    /// The whole vector, optionally followed by revision-tree IDs (newest first), with
    /// `*` for `localSource` when one is given.
    public func text(style: TextStyle = .couchbaseLite, legacy: [RevID] = [],
                     abbreviating localSource: SourceID? = nil) -> String {
        let head = current.text(abbreviating: localSource)
        guard let rest = historyText(style: style, legacy: legacy, abbreviating: localSource) else { return head }
        return head + (merges.isEmpty ? style.semicolon : style.comma) + rest
    }

    /// The `history` property of a `rev` message: everything after the current version;
    /// nil when there is nothing to send.
    public func historyText(style: TextStyle = .couchbaseLite, legacy: [RevID] = [],
                            abbreviating localSource: SourceID? = nil) -> String? {
        let older = previous.map { $0.text(abbreviating: localSource) } + legacy.map(\.description)
        let olderText = older.joined(separator: style.comma)
        if merges.isEmpty { return older.isEmpty ? nil : olderText }
        let mergeText = merges.map { $0.text(abbreviating: localSource) }.joined(separator: style.comma)
        return mergeText + (older.isEmpty ? ";" : style.semicolon + olderText)
    }
}
