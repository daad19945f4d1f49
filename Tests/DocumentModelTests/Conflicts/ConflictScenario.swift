import Testing
@testable import DocumentModel

/// A document's revisions for conflict tests, with revision IDs computed the way
/// the store computes them (`RevID.compute` over `RevisionBody.digestBody`).
struct ConflictScenario {
    struct Revision {
        let rev: RevID
        let parent: RevID?
        let deleted: Bool
        let body: [String: JSON]
    }

    /// Every revision, parents before children.
    private(set) var revisions: [Revision] = []

    /// Adds a revision with `body` (an object) after `parent` (nil: a root).
    @discardableResult
    mutating func add(_ body: JSON, after parent: RevID?, deleted: Bool = false) -> RevID {
        let object = body.objectValue ?? [:]
        let rev = RevID.compute(parent: parent, deleted: deleted, canonicalBody: RevisionBody.digestBody(object))
        precondition(!revisions.contains { $0.rev == rev }, "duplicate revision \(rev) in a test scenario")
        revisions.append(Revision(rev: rev, parent: parent, deleted: deleted, body: object))
        return rev
    }

    /// `length` edits after `parent`, each with `body`; returns the last one.
    @discardableResult
    mutating func edit(_ body: JSON, after parent: RevID, length: Int = 1) -> RevID {
        var last = parent
        for _ in 0..<length { last = add(body, after: last) }
        return last
    }

    /// A tombstone (body `{}`) after `parent`, as a DELETE writes it.
    @discardableResult
    mutating func delete(after parent: RevID) -> RevID {
        add([:], after: parent, deleted: true)
    }

    var bodies: [RevID: [String: JSON]] {
        Dictionary(uniqueKeysWithValues: revisions.map { ($0.rev, $0.body) })
    }

    func body(_ rev: RevID) -> [String: JSON]? {
        revisions.first { $0.rev == rev }?.body
    }

    /// The revisions that are nobody's parent.
    var leaves: [RevID] {
        let parents = Set(revisions.compactMap(\.parent))
        return revisions.map(\.rev).filter { !parents.contains($0) }
    }

    /// The tree with the revisions inserted one by one in the order they were added.
    func tree() throws -> RevTree {
        var tree = RevTree()
        for (i, revision) in revisions.enumerated() {
            try tree.insert(revision.rev, parent: revision.parent, deleted: revision.deleted, hasBody: true,
                            sequence: UInt64(i + 1))
        }
        return tree
    }

    /// The tree a node builds when the branches arrive by replication, one leaf
    /// (with its whole history) after another, in `order`.
    func tree(arrivalOrder order: [RevID]) throws -> RevTree {
        var tree = RevTree()
        for (i, leaf) in order.enumerated() {
            var history = [leaf]
            while let parent = revisions.first(where: { $0.rev == history.last! })?.parent { history.append(parent) }
            let deleted = revisions.first { $0.rev == leaf }!.deleted
            try tree.insert(history: history, deleted: deleted, hasBody: true, sequence: UInt64(i + 1))
        }
        return tree
    }

    /// Resolves the conflict of `tree` (default: the scenario's own tree), giving
    /// the merge base body when `withBase` and the scenario has it.
    func resolve(_ policy: ConflictPolicy, script: (any ConflictScript)? = nil, tree: RevTree? = nil,
                 withBase: Bool = true) throws -> ConflictOutcome {
        let tree = try tree ?? self.tree()
        let baseBody = withBase ? tree.mergeBase.flatMap { body($0) } : nil
        return ConflictResolver.resolve(tree: tree, bodies: bodies, mergeBaseBody: baseBody, policy: policy,
                                        script: script)
    }

    /// The resolution of `policy`, failing the test when there is none.
    func resolution(_ policy: ConflictPolicy, script: (any ConflictScript)? = nil, tree: RevTree? = nil,
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> ConflictResolution {
        let outcome = try resolve(policy, script: script, tree: tree)
        return try #require(outcome.resolution, "no resolution: \(outcome)", sourceLocation: sourceLocation)
    }

    /// The body readers see once `resolution` is written (nil: deleted).
    func finalBody(_ resolution: ConflictResolution) -> [String: JSON]? {
        guard let result = resolution.result else { return body(resolution.winningLeaf) }
        return result.deleted ? nil : result.body
    }
}

extension ConflictResolution {
    /// `tree` with every revision of the resolution inserted.
    func applied(to tree: RevTree) throws -> RevTree {
        var tree = tree
        for revision in revisions {
            try tree.insert(revision.revID, parent: revision.parent, deleted: revision.deleted, hasBody: true,
                            sequence: UInt64(tree.count + 1))
        }
        return tree
    }

    /// The written revisions as comparable text: ID, parent, deleted flag and canonical body.
    var fingerprint: [String] {
        revisions.map { r in
            "\(r.revID) \(r.parent) \(r.deleted) " + String(decoding: r.canonicalBody, as: UTF8.self)
        }
    }
}

/// All orderings of `items` (for 3–4 branches).
func permutations<T>(_ items: [T]) -> [[T]] {
    guard items.count > 1 else { return [items] }
    var result = [[T]]()
    for (i, item) in items.enumerated() {
        var rest = items
        rest.remove(at: i)
        for tail in permutations(rest) { result.append([item] + tail) }
    }
    return result
}

/// The expected ID of a resolution revision: the store's computation for an edit.
func expectedRevID(parent: RevID, deleted: Bool, body: [String: JSON]) -> RevID {
    RevID.compute(parent: parent, deleted: deleted, canonicalBody: RevisionBody.digestBody(body))
}
