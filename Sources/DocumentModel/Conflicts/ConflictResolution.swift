/// The revisions that resolve one conflict; owns their deterministic IDs.
///
/// Every revision ID is `RevID.compute(parent:deleted:canonicalBody:)` over
/// `RevisionBody.digestBody(body)`, exactly as the store computes the ID of a
/// normal edit (and of a DELETE, whose body is `{}`), so every node that writes
/// the same resolution writes byte-identical revisions (§4 rule 3).
public struct ConflictResolution: Sendable, Equatable {
    /// One revision to write: a child of a current live leaf.
    public struct Revision: Sendable, Equatable {
        public let revID: RevID
        /// The live leaf this revision extends.
        public let parent: RevID
        public let deleted: Bool
        /// User properties plus `_attachments` when present; `{}` for a tombstone.
        public let body: [String: JSON]

        /// A child of `parent` with `body`, its ID computed like the store does.
        public init(parent: RevID, deleted: Bool, body: [String: JSON]) {
            self.revID = RevID.compute(parent: parent, deleted: deleted,
                                       canonicalBody: RevisionBody.digestBody(body))
            self.parent = parent
            self.deleted = deleted
            self.body = body
        }

        /// The tombstone that closes the branch ending at `leaf`: deleted, body `{}`.
        public static func tombstone(of leaf: RevID) -> Revision {
            Revision(parent: leaf, deleted: true, body: [:])
        }

        /// The canonical JSON of `body`.
        public var canonicalBody: [UInt8] { JSON.object(body).canonicalBytes() }
    }

    /// The policy that produced this resolution.
    public let policy: ConflictPolicy
    /// The first live leaf in winner order before the resolution.
    public let winningLeaf: RevID
    /// The latest common ancestor of the live leaves (nil: they share no root).
    public let mergeBase: RevID?
    /// The child of `winningLeaf`: the resolved body, or a tombstone when the
    /// document ends deleted. Nil when the winning leaf already holds the result
    /// and stays the current revision.
    public let result: Revision?
    /// One tombstone per other live leaf, in the winner order of those leaves.
    public let tombstones: [Revision]

    public init(policy: ConflictPolicy, winningLeaf: RevID, mergeBase: RevID?, result: Revision?,
                tombstones: [Revision]) {
        self.policy = policy
        self.winningLeaf = winningLeaf
        self.mergeBase = mergeBase
        self.result = result
        self.tombstones = tombstones
    }

    /// Everything to write, in order: `result` (if any), then `tombstones`.
    public var revisions: [Revision] {
        guard let result else { return tombstones }
        return [result] + tombstones
    }

    /// Whether the document ends deleted (every live leaf gets a tombstone).
    public var deletesDocument: Bool { result?.deleted == true }

    /// The only live leaf once the resolution is written: `result`'s ID, or the
    /// winning leaf when there is no result; nil when the document ends deleted.
    public var current: RevID? {
        guard let result else { return winningLeaf }
        return result.deleted ? nil : result.revID
    }
}
