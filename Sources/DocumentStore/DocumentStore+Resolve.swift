import DocumentModel
import GRDB

extension DocumentStore {
    /// Resolves the conflict of `docID`, if it has one, and writes the resolution
    /// (ARCHITECTURE.md §4): the live leaves' bodies and the merge base body are
    /// read, `ConflictResolver` decides, and its revisions (a child of the winning
    /// leaf and a tombstone on every other live leaf) are inserted with their
    /// parents as history, all in one transaction, so the resolution and what it
    /// saw cannot drift apart. A resolution is an ordinary change: it gets
    /// sequences and replicates. Its revisions get derived version vectors
    /// (`resolutionVectors`), so every node writes the same ones.
    ///
    /// - Parameters:
    ///   - policies: the database's policies; the document's `type` picks one.
    ///   - policy: applies this policy instead (`POST /{db}/{doc}/_resolve`).
    ///   - script: the JavaScript function for the `js` policy.
    ///   - resolver: the node whose resolver this is (recorded as the revisions' origin,
    ///     `RevisionOrigin.resolver`, with the policy applied).
    /// - Returns: what the resolver decided (`.resolved` only when it was written).
    public func resolveConflict(
        docID: String, policies: ConflictPolicies, policy override: ConflictPolicy? = nil,
        script: (any ConflictScript)? = nil, resolver: String? = nil
    ) async throws(StoreError) -> ConflictOutcome {
        let (outcome, commit) = try await write { db -> (ConflictOutcome, CommitOutcome?) in
            guard let row = try DocumentRow.load(db, key: docID) else { throw StoreError.missing }
            let tree = row.tree
            guard tree.hasConflict else { return (.noConflict, nil) }
            var bodies: [RevID: [String: JSON]] = [:]
            for leaf in tree.liveLeaves {
                if let body = try row.body(db, of: leaf) { bodies[leaf] = body }
            }
            var baseBody: [String: JSON]?
            if let base = tree.mergeBase, tree.node(for: base)?.hasBody == true {
                baseBody = try row.body(db, of: base)
            }
            let policy = override ?? policies.policy(for: tree, bodies: bodies)
            let outcome = ConflictResolver.resolve(
                tree: tree, bodies: bodies, mergeBaseBody: baseBody, policy: policy, script: script)
            guard case .resolved(let resolution) = outcome else { return (outcome, nil) }
            // Derived versions (§10.9): the same on every node that resolves these leaves.
            var leafVectors: [RevID: VersionVector] = [:]
            for leaf in tree.liveLeaves { leafVectors[leaf] = try Self.storedVector(db, row, of: leaf) }
            let vectors = try Self.resolutionVectors(resolution, leaves: leafVectors)
            let prepared = resolution.revisions.map { revision in
                Result { () throws(StoreError) in
                    try self.prepare(DocumentUpdate(
                        docID: docID, body: revision.body, deleted: revision.deleted,
                        mode: .replicate(history: [revision.revID, revision.parent]), version: vectors[revision.revID]))
                }
            }
            let commit = try self.commit(
                prepared, db: db, origin: .resolver(node: resolver, detail: override.map { "_resolve: \($0)" } ?? "\(policy)"))
            // All or nothing: a revision that cannot be stored rolls the resolution back.
            for case .failure(let error) in commit.results { throw error }
            return (outcome, commit)
        }
        if let commit { finishCommit(commit) }
        return outcome
    }

    /// Stores the body of a revision the tree knows only as a bodiless placeholder
    /// (a merge base fetched from a peer). The body must hash to the revision ID
    /// (§2) given its parent in the tree; a body that does not is refused, so a
    /// peer cannot slip a different base under a merge.
    public func storeMissingBody(docID: String, rev: RevID, body: [String: JSON]) async throws(StoreError) {
        guard let (tree, _) = try await read({ db in try DocumentRow.loadTree(db, key: docID) }),
              let node = tree.node(for: rev) else {
            throw StoreError.missing
        }
        if node.hasBody { return }
        let expected = RevID.compute(
            parent: tree.parent(of: rev), deleted: node.deleted, canonicalBody: RevisionBody.digestBody(body),
            using: CryptoSHA1.self)
        guard expected == rev else {
            throw StoreError.badRequest("the body offered for \(docID) \(rev) does not match its revision ID")
        }
        _ = try await save(DocumentUpdate(docID: docID, body: body, deleted: node.deleted, mode: .replicate(history: [rev])))
    }

    /// IDs of the documents that have more than one live leaf, in changes-feed order,
    /// with their latest sequence (for `GET /{db}/_conflicts` and the startup scan).
    public func conflictedDocuments(since: UInt64 = 0, limit: Int = 1000) async throws(StoreError) -> [DocumentListing] {
        try await conflictedDocumentsAndCursor(since: since, limit: limit).documents
    }

    /// The conflicted documents whose latest change is after `since` (at most `limit`, in
    /// sequence order), read through the `docs_conflicted` partial index, so the cost is
    /// that of the conflicts, not of every change. `through` is the sequence up to which
    /// the answer is complete (the snapshot's last sequence when fewer than `limit` were
    /// found): a caller that continues after it misses no conflict.
    public func conflictedDocumentsAndCursor(
        since: UInt64, limit: Int
    ) async throws(StoreError) -> (documents: [DocumentListing], through: UInt64) {
        try await read { db in
            let statement = try db.cachedStatement(sql: """
                SELECT key, seq, tree, NULL FROM \(Tables.docs) WHERE conflicted = 1 AND seq > ? ORDER BY seq LIMIT ?
                """)
            let rows = try Row.fetchAll(statement, arguments: [Int64(clamping: since), max(0, limit)]).map(Self.listing)
            let found = rows.filter { $0.tree.hasConflict }
            if rows.count == limit, let last = rows.last { return (found, last.sequence) }
            let lastSequence = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT value FROM \(Tables.meta) WHERE key = 'last_seq'")) ?? 0
            return (found, max(since, UInt64(lastSequence)))
        }
    }
}
