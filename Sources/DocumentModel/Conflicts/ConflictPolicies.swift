/// The conflict policies of one database: a default and per-document-type
/// overrides (ARCHITECTURE.md §4); owns the choice of the policy for a conflict.
///
/// The type of a conflicted document is read from the body of its **winning
/// live leaf** (the first live leaf in winner order), property `typeField`
/// (default `"type"`), which must be a string. Why the winning leaf: it is the
/// same on every node (winner order never depends on arrival order), it is the
/// version readers currently see, its body is always stored (bodies are kept for
/// all leaves, §3) unlike the merge base's, and when branches disagree on the
/// type, the winner's value is also what `merge` would keep. A missing or
/// non-string type, or a type without an override, uses `defaultPolicy`.
public struct ConflictPolicies: Sendable, Hashable {
    /// The policy for documents whose type has no override.
    public var defaultPolicy: ConflictPolicy
    /// Overrides by document type.
    public var byType: [String: ConflictPolicy]
    /// The top-level property that holds a document's type.
    public var typeField: String

    public init(default defaultPolicy: ConflictPolicy = .default, byType: [String: ConflictPolicy] = [:],
                typeField: String = "type") {
        self.defaultPolicy = defaultPolicy
        self.byType = byType
        self.typeField = typeField
    }

    /// Policies from configuration strings (see `ConflictPolicy.init(parsing:)`);
    /// the error of an override names its type.
    public init(parsingDefault defaultText: String, byType texts: [String: String] = [:],
                typeField: String = "type") throws(ConflictPolicyError) {
        let defaultPolicy = try ConflictPolicy(parsing: defaultText)
        var byType = [String: ConflictPolicy](minimumCapacity: texts.count)
        for (type, text) in texts.sorted(by: { CanonicalJSONWriter.utf8Precedes($0.key, $1.key) }) {
            do {
                byType[type] = try ConflictPolicy(parsing: text)
            } catch {
                throw ConflictPolicyError(text: text, reason: "\(error.reason) (policy of type \"\(type)\")")
            }
        }
        self.init(default: defaultPolicy, byType: byType, typeField: typeField)
    }

    /// The policy for documents of `type` (nil: no type).
    public func policy(forType type: String?) -> ConflictPolicy {
        guard let type, let policy = byType[type] else { return defaultPolicy }
        return policy
    }

    /// The policy for a document whose winning live leaf has `body` (nil: body unknown).
    public func policy(forWinningBody body: [String: JSON]?) -> ConflictPolicy {
        policy(forType: body?[typeField]?.stringValue)
    }

    /// The policy for the conflict in `tree`: from the type in the body of its
    /// first live leaf in winner order (the default when that body is not in `bodies`).
    public func policy(for tree: RevTree, bodies: [RevID: [String: JSON]]) -> ConflictPolicy {
        policy(forWinningBody: tree.liveLeaves.first.flatMap { bodies[$0] })
    }
}
