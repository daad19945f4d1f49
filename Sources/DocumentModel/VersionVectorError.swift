/// Why a version, a version vector or a version-vector operation was refused; each
/// case names the offending text or version.
public enum VersionVectorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text holds no version at all.
    case empty
    /// A version is not `<lowercase hex time>@<source>`; the second value says why.
    case malformedVersion(String, String)
    /// A source is not 22 characters of canonical unpadded base64, or is all zero.
    case invalidSourceID(String)
    /// `…@*` where no local source was given to stand for `*`.
    case relativeSource(String)
    /// Two separators in a row, or a separator at the start or the end.
    case emptyEntry(String)
    /// More than one `;` (the one between current and merge versions and previous ones).
    case multipleSemicolons(String)
    /// A revision-tree ID where a version was expected, or a version after one.
    case misplacedRevID(String)
    /// The same source twice, other than the current version's source once among the
    /// merge versions.
    case duplicateSource(SourceID)
    /// The current version's source among the merge versions with a time that is not
    /// older than the current version's.
    case mergeVersionNotOlder(current: Version, merge: Version)
    /// A new current version that is not newer than what the vector holds for its source.
    case notNewer(Version, existing: UInt64)
    /// Vectors that should share their current version do not.
    case differentCurrentVersions(Version, Version)
    /// An operation that needs at least one vector got none.
    case noVectors
    /// A received vector whose current version is not newer than one of its other
    /// (clock-timed) versions: no hybrid logical clock writes such a revision.
    case currentNotNewest(current: Version, other: Version)

    public var description: String {
        switch self {
        case .empty: "empty version vector"
        case .malformedVersion(let text, let why): "invalid version '\(text)': \(why)"
        case .invalidSourceID(let text): "invalid source ID '\(text)' (22 characters of unpadded base64, not all zero)"
        case .relativeSource(let text): "version '\(text)' uses '*' but no local source ID is known"
        case .emptyEntry(let text): "empty entry in version vector '\(text)'"
        case .multipleSemicolons(let text): "more than one ';' in version vector '\(text)'"
        case .misplacedRevID(let text): "revision ID '\(text)' where a version was expected (revision IDs may only end a history)"
        case .duplicateSource(let source): "source \(source) appears twice in a version vector"
        case .mergeVersionNotOlder(let current, let merge):
            "merge version \(merge) is not older than current version \(current) of the same source"
        case .notNewer(let version, let existing):
            "version \(version) is not newer than \(String(existing, radix: 16))@\(version.source) already in the vector"
        case .differentCurrentVersions(let a, let b): "current versions differ: \(a) and \(b)"
        case .noVectors: "no version vectors given"
        case .currentNotNewest(let current, let other):
            "current version \(current) is not newer than \(other), which it descends from"
        }
    }
}
