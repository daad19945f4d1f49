/// How a document conflict is resolved (ARCHITECTURE.md §4); owns the policy
/// names used in the configuration and their parsing.
///
/// Configuration strings: `"none"`, `"winner"`, `"deletes-win"`, `"merge"`,
/// `"lww:<field>"` and `"js"`. `description` gives back exactly that string, so
/// `ConflictPolicy(policy.description) == policy`. The JavaScript function of
/// `.js` is not part of the value: it comes from outside as a `ConflictScript`.
public enum ConflictPolicy: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// Keep the conflict; the winner order decides what readers see.
    case none
    /// Keep the winning leaf; tombstone the other live leaves.
    case winner
    /// The document ends deleted if a branch deleted it since the merge base; else like `winner`.
    case deletesWin
    /// N-way merge against the merge base, property by property.
    case merge
    /// The live leaf whose `field` is greatest wins.
    case lww(field: String)
    /// A `ConflictScript` (the configured JavaScript function) computes the result.
    case js

    /// The policy of a database that does not configure one.
    public static let `default` = ConflictPolicy.winner

    /// The configuration names of the policies without a parameter.
    static let plainNames: [(String, ConflictPolicy)] = [
        ("none", .none), ("winner", .winner), ("deletes-win", .deletesWin), ("merge", .merge), ("js", .js),
    ]

    /// The configuration prefix of `lww:<field>`.
    static let lwwPrefix = "lww:"

    /// Parses a configuration string. Names are exact and lowercase, without
    /// surrounding spaces. `lww:` needs a non-empty field name that does not
    /// start with `_` (reserved keys are never user data, §2).
    public init(parsing text: String) throws(ConflictPolicyError) {
        for (name, policy) in Self.plainNames where name == text {
            self = policy
            return
        }
        if text.hasPrefix(Self.lwwPrefix) {
            let field = String(text.dropFirst(Self.lwwPrefix.count))
            if field.isEmpty {
                throw ConflictPolicyError(text: text, reason: "lww needs a field name, as in \"lww:updatedAt\"")
            }
            if field.utf8.first == UInt8(ascii: "_") {
                throw ConflictPolicyError(
                    text: text, reason: "the lww field \"\(field)\" starts with \"_\", which is reserved for metadata")
            }
            self = .lww(field: field)
            return
        }
        throw ConflictPolicyError(
            text: text, reason: "expected one of none, winner, deletes-win, merge, lww:<field>, js")
    }

    /// Parses a configuration string; nil where `init(parsing:)` throws.
    public init?(_ description: String) {
        do {
            try self.init(parsing: description)
        } catch {
            return nil
        }
    }

    /// The configuration string.
    public var description: String {
        switch self {
        case .none: return "none"
        case .winner: return "winner"
        case .deletesWin: return "deletes-win"
        case .merge: return "merge"
        case .lww(let field): return Self.lwwPrefix + field
        case .js: return "js"
        }
    }

    /// Whether resolving needs the merge base body (rule 2 of §4): `merge` and
    /// `js`. `deletes-win` needs the merge base revision, never its body.
    public var needsMergeBaseBody: Bool {
        switch self {
        case .merge, .js: return true
        case .none, .winner, .deletesWin, .lww: return false
        }
    }

    /// Whether resolving reads the bodies of the live leaves: `merge`, `lww` and
    /// `js`. `winner` and `deletes-win` depend on the revision tree alone.
    public var needsLeafBodies: Bool {
        switch self {
        case .merge, .lww, .js: return true
        case .none, .winner, .deletesWin: return false
        }
    }
}
