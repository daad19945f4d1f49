import DocumentModel
import Foundation
import GRDB

extension DocumentStore {
    /// Applies one prepared update inside the current transaction.
    static func apply(
        _ update: PreparedUpdate, db: Database, counters: inout Counters, context: WriteContext
    ) throws -> WriteResult {
        if update.insertsOptimistically, let result = try insertNew(update, db: db, counters: &counters, context: context) {
            return result
        }
        let existing = try DocumentRow.load(db, key: update.docID)
        var tree = existing?.tree ?? RevTree()
        let wasLive = existing.map { !$0.tree.isDeleted } ?? false
        let sequence = counters.lastSequence + 1

        let revID: RevID
        let body: ObjectBody
        let vector: VersionVector
        var encoded: [UInt8]?
        /// The parent, its body and deleted flag, for the gate.
        var parentRev: RevID?
        var parentBody: [String: JSON]?
        var parentDeleted = false
        switch update.mode {
        case .edit(let requestedParent):
            let parent: RevID?
            if let incoming = update.version, requestedParent == nil, let winner = tree.winner, let existing {
                // A version-vector peer's revision (Couchbase Lite 4) continues the current
                // winner, whatever the winner is (§10.9 rule 2), or is already here.
                // As the peer is shown it: with the versions of the branches a resolution closed.
                let winnerVector = try winnerVectorOverLeaves(db, existing) ?? VersionVector(Version.legacy(revID: winner))
                if winnerVector.contains(incoming.current) {
                    return WriteResult(docID: update.docID, revID: winner, sequence: nil, version: winnerVector)
                }
                if continues(incoming, parent: winnerVector) {
                    parent = winner
                } else if update.noConflicts {
                    throw StoreError.updateConflict
                } else if incoming.dominates(winnerVector) {
                    // From a peer outside the mesh (a Sync Gateway 4 we pull from): it saw
                    // our winner and more; its revisions in between never come here.
                    parent = winner
                } else {
                    // Concurrent with our winner: a branch from the newest ancestor of the
                    // winner that the incoming vector has seen (none: a root of its own),
                    // resolved as any conflict.
                    parent = try versionBranchPoint(incoming, winner: winner, tree: tree, db: db, row: existing)
                }
            } else {
                parent = try editParent(requested: requestedParent, tree: tree, deleting: update.deleted)
            }
            let generation = (parent?.generation ?? 0) + 1
            parentRev = parent
            parentBody = try parent.flatMap { try existing?.body(db, of: $0) }
            parentDeleted = parent.flatMap { tree.node(for: $0)?.deleted } ?? false
            let parentAttachments = parentBody.map { AttachmentInfo.parse($0["_attachments"]) } ?? [:]
            body = try resolveBody(update, generation: generation, ancestors: [parentAttachments], blobs: context.blobs)
            let bytes = try update.encoded ?? encode(body.properties, maxSize: context.maxSize)
            encoded = bytes
            if let precomputed = update.editRevision, parent == requestedParent {
                revID = precomputed
            } else {
                // Without attachments the stored form is exactly what the digest covers.
                let digestBody = body["_attachments"] == nil ? bytes : RevisionBody.digestBody(body.properties)
                revID = RevID.compute(parent: parent, deleted: update.deleted, canonicalBody: digestBody, using: CryptoSHA1.self)
            }
            if let incoming = update.version, requestedParent == nil, !update.noConflicts, let existing,
               tree.node(for: revID)?.hasBody == true {
                // A pulled version whose revision is here already: the same edit made on both
                // sides (one revision ID, two versions). One revision; its vectors reconciled.
                return try reconcileVector(
                    db, existing, docID: update.docID, revID: revID, incoming: incoming, clock: context.clock, counters: &counters)
            }
            do {
                try tree.insert(revID, parent: parent, deleted: update.deleted, hasBody: true, sequence: sequence)
            } catch {
                throw StoreError.updateConflict
            }
            let parentVector = try storedVector(db, existing, of: parent)
            if let incoming = update.version {
                // A version-vector client's edit must descend from what it replaces.
                if let parentVector, !incoming.dominates(parentVector) { throw StoreError.updateConflict }
                vector = try receivedVector(incoming, existing: nil, parent: parentVector)
                context.clock.observe(incoming)
            } else {
                vector = try localVector(parent: parentVector, clock: context.clock)
            }
        case .replicate(let history):
            revID = history[0]
            if let node = tree.node(for: revID), node.hasBody {
                if let incoming = update.version, let existing {
                    // The same revision by another path: reconcile the vectors it came with.
                    return try reconcileVector(
                    db, existing, docID: update.docID, revID: revID, incoming: incoming, clock: context.clock, counters: &counters)
                }
                return WriteResult(docID: update.docID, revID: revID, sequence: nil)
            }
            // Stubs resolve against the closest ancestor whose body we hold.
            var ancestors: [[String: AttachmentInfo]] = []
            if let existing {
                for rev in history.dropFirst() where tree.node(for: rev)?.hasBody == true {
                    if let parentBody = try existing.body(db, of: rev) {
                        ancestors.append(AttachmentInfo.parse(parentBody["_attachments"]))
                    }
                }
            }
            body = try resolveBody(update, generation: revID.generation, ancestors: ancestors, blobs: context.blobs)
            parentRev = history.count > 1 ? history[1] : nil
            if context.gate?.readsParentBody == true, history.count > 1, let existing,
               let parentNode = tree.node(for: history[1]) {
                parentDeleted = parentNode.deleted
                if parentNode.hasBody { parentBody = try existing.body(db, of: history[1]) }
            }
            if update.noConflicts, !tree.contains(revID), !extendsWinner(history, tree: tree) {
                throw StoreError.updateConflict
            }
            let parentVector = try history.count > 1 ? storedVector(db, existing, of: history[1]) : nil
            if let incoming = update.version {
                vector = try receivedVector(incoming, existing: nil, parent: parentVector)
                context.clock.observe(incoming)
            } else {
                vector = legacyVector(revID: revID, parent: parentVector)
            }
            if tree.contains(revID) {
                // Known placeholder without a body (an ancestor we learned from a history):
                // store the body now; no new sequence.
                tree.setHasBody(revID, true)
                let bytes = try update.encoded ?? encode(body.properties, maxSize: context.maxSize)
                try storeBody(
                    db, existing: existing!, tree: tree, rev: revID, bytes: bytes,
                    vector: storedText(vector, revID: revID, update: update), sequence: existing!.sequence)
                return WriteResult(docID: update.docID, revID: revID, sequence: nil, version: vector)
            }
            do {
                _ = try tree.insert(history: history, deleted: update.deleted, hasBody: true, sequence: sequence)
            } catch {
                throw StoreError.badRequest("Bad _revisions: \(error)")
            }
        }

        // Without attachments the body is the update's properties: `update.encoded`.
        let bytes = try encoded ?? update.encoded ?? encode(body.properties, maxSize: context.maxSize)
        let access = try gateAccess(
            context, update: update, revID: revID, body: body, parent: parentRev, parentBody: parentBody,
            parentDeleted: parentDeleted)
        let removed = tree.stem(limit: context.revsLimit)
        let vectorText = storedText(vector, revID: revID, update: update)
        if let existing {
            try storeBody(db, existing: existing, tree: tree, rev: revID, bytes: bytes, vector: vectorText, sequence: sequence)
            if !removed.isEmpty {
                let statement = try db.cachedStatement(sql: "DELETE FROM \(Tables.revs) WHERE doc = ? AND rev = ?")
                for rev in removed { try statement.execute(arguments: [existing.rowID, rev.description]) }
            }
        } else {
            let statement = try db.cachedStatement(sql: """
                INSERT INTO \(Tables.docs)(key, seq, winner, deleted, conflicted, tree, body, vv) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
            try statement.execute(arguments: [
                update.docID, Int64(sequence), revID.description, tree.isDeleted, tree.hasConflict,
                Data(tree.serialized()), Data(bytes), vectorText,
            ])
        }
        if access != nil {
            let docRow = existing?.rowID ?? db.lastInsertedRowID
            let forget = try db.cachedStatement(sql: "DELETE FROM \(Tables.revAccess) WHERE doc = ? AND rev = ?")
            for rev in removed { try forget.execute(arguments: [docRow, rev.description]) }
            try recordAccess(db, docRow: docRow, rev: revID, access: access, winner: tree.winner!, sequence: sequence, isNew: existing == nil)
        }
        counters.lastSequence = sequence
        counters.docCount += Int64((tree.isDeleted ? 0 : 1) - (wasLive ? 1 : 0))
        return WriteResult(docID: update.docID, revID: revID, sequence: sequence, version: vector)
    }

    /// Inserts a document that is new here without looking for it first; nil when a
    /// row with that ID exists (the caller then takes the general path).
    private static func insertNew(
        _ update: PreparedUpdate, db: Database, counters: inout Counters, context: WriteContext
    ) throws -> WriteResult? {
        guard let bytes = update.encoded else { return nil }
        let sequence = counters.lastSequence + 1
        var tree = RevTree()
        let revID: RevID
        switch update.mode {
        case .edit:
            guard let rev = update.editRevision else { return nil }
            revID = rev
            try? tree.insert(rev, parent: nil, deleted: update.deleted, hasBody: true, sequence: sequence)
        case .replicate(let history):
            revID = history[0]
            do {
                _ = try tree.insert(history: history, deleted: update.deleted, hasBody: true, sequence: sequence)
            } catch {
                throw StoreError.badRequest("Bad _revisions: \(error)")
            }
        }
        guard tree.contains(revID) else { return nil }
        // The vector (§10.9): as sent; else a new local version for a creation, the
        // legacy version (stored as NULL) for a replicated revision.
        let vector: VersionVector?
        let vectorText: DirectBinding.Value
        if let incoming = update.version {
            vector = try receivedVector(incoming, existing: nil, parent: nil)
            vectorText = storedText(vector!, revID: revID, update: update).map { .text($0) } ?? .null
            context.clock.observe(incoming)
        } else if case .edit = update.mode {
            let version = Version(time: try context.clock.next(after: 0), source: context.clock.source)
            vector = VersionVector(version)
            vectorText = .text(String(version.time, radix: 16) + "@" + context.clock.sourceText)
        } else {
            vector = nil
            vectorText = .null
        }
        let access = try gateAccess(
            context, update: update, revID: revID, body: update.properties, parent: parentRevision(of: update),
            parentBody: nil, parentDeleted: false)
        tree.stem(limit: context.revsLimit)
        let statement = try db.cachedStatement(sql: """
            INSERT INTO \(Tables.docs)(key, seq, winner, deleted, conflicted, tree, body, vv) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(key) DO NOTHING
            """)
        try DirectBinding.execute(statement, [
            .text(update.docID), .integer(Int64(sequence)), .text(revID.description), .integer(tree.isDeleted ? 1 : 0),
            .integer(0), .blob(tree.serialized()), .blob(bytes), vectorText,
        ], db: db)
        guard db.changesCount == 1 else { return nil }
        try recordAccess(db, docRow: db.lastInsertedRowID, rev: revID, access: access, winner: revID, sequence: sequence, isNew: true)
        counters.lastSequence = sequence
        if !tree.isDeleted { counters.docCount += 1 }
        return WriteResult(
            docID: update.docID, revID: revID, sequence: sequence, version: vector ?? VersionVector(Version.legacy(revID: revID)))
    }

    /// The parent a new document's revision was evaluated with: none for a creation,
    /// `history[1]` for a replicated revision (absent here, so without a body).
    private static func parentRevision(of update: PreparedUpdate) -> RevID? {
        if case .replicate(let history) = update.mode, history.count > 1 { return history[1] }
        return nil
    }

    /// No-conflicts mode: whether a replicated history continues the current winner
    /// (its nearest ancestor held here is the winning leaf), or, sharing no ancestor
    /// with the document, lands on an absent or deleted one.
    static func extendsWinner(_ history: [RevID], tree: RevTree) -> Bool {
        guard let winner = tree.winner else { return true }
        guard let known = history.dropFirst().first(where: { tree.contains($0) }) else { return tree.isDeleted }
        return known == winner
    }

    /// The parent a normal edit attaches to, or a conflict.
    private static func editParent(requested: RevID?, tree: RevTree, deleting: Bool) throws -> RevID? {
        guard let requested else {
            // Creating: only when the document is absent or entirely deleted, in which
            // case the new revision extends the winning tombstone.
            if tree.isEmpty { return nil }
            if tree.isDeleted && !deleting { return tree.winner }
            throw StoreError.updateConflict
        }
        guard let node = tree.node(for: requested), tree.isLeaf(requested) else {
            throw StoreError.updateConflict
        }
        if node.deleted && !tree.isDeleted { throw StoreError.updateConflict }
        if node.deleted && deleting { throw StoreError.updateConflict }
        return requested
    }

    /// The stored body: user properties plus resolved `_attachments`.
    private static func resolveBody(
        _ update: PreparedUpdate, generation: Int, ancestors: [[String: AttachmentInfo]], blobs: BlobStore
    ) throws -> ObjectBody {
        guard !update.attachments.isEmpty else { return update.properties }
        var body = update.properties.properties
        var resolved: [String: JSON] = [:]
        for (name, pending) in update.attachments {
            switch pending {
            case .new(let contentType, let digest, let length, let stored):
                guard stored || blobs.contains(digest) else {
                    throw StoreError(.preconditionFailed, error: "missing_stub", reason: "Missing attachment content for \(name) (\(digest))")
                }
                resolved[name] = AttachmentInfo(contentType: contentType, digest: digest, length: length, revpos: generation).json
            case .stub(let stubName, let digest, let revpos, let contentType, let length):
                if let info = ancestors.lazy.compactMap({ $0[stubName] }).first(where: { digest == nil || $0.digest == digest }) {
                    resolved[name] = info.json
                } else if let digest, blobs.contains(digest) {
                    // A stub of content the sender had us fetch; Couchbase Lite 4 sends no
                    // `revpos` (versions have no generation): this revision's.
                    let revpos = revpos ?? generation
                    let storedLength = length
                        ?? blobs.length(of: digest) ?? 0
                    resolved[name] = AttachmentInfo(
                        contentType: contentType ?? "application/octet-stream", digest: digest, length: storedLength,
                        revpos: revpos
                    ).json
                } else {
                    throw StoreError(.preconditionFailed, error: "missing_stub", reason: "Invalid attachment stub in \(update.docID) for \(stubName)")
                }
            case .known(let info):
                guard blobs.contains(info.digest) else {
                    throw StoreError(.preconditionFailed, error: "missing_stub", reason: "Missing attachment content for \(name) (\(info.digest))")
                }
                resolved[name] = info.json
            }
        }
        body["_attachments"] = .object(resolved)
        return ObjectBody(body)
    }

    private static func encode(_ body: [String: JSON], maxSize: Int) throws -> [UInt8] {
        let bytes = JSON.object(body).canonicalBytes()
        if bytes.count > maxSize {
            throw StoreError(.tooLarge, reason: "Document exceeds the maximum size of \(maxSize) bytes")
        }
        return bytes
    }

    /// Writes `bytes` and `vector` (stored text) as the body and version vector of
    /// `rev` and keeps the invariant: `docs.body`/`docs.vv` hold the winner's,
    /// `revs` every other stored body with its vector.
    private static func storeBody(
        _ db: Database, existing: DocumentRow, tree: RevTree, rev: RevID, bytes: [UInt8], vector: String?,
        sequence: UInt64
    ) throws {
        let oldWinner = existing.tree.winner
        let newWinner = tree.winner!
        var winnerBody: [UInt8]? = existing.winnerBody
        var winnerVector: String? = existing.winnerVector
        let insertRev = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO \(Tables.revs)(doc, rev, body, vv) VALUES (?, ?, ?, ?)")
        if oldWinner != newWinner {
            if let oldWinner, let oldBody = existing.winnerBody, tree.contains(oldWinner) {
                try insertRev.execute(arguments: [existing.rowID, oldWinner.description, Data(oldBody), existing.winnerVector])
            }
            if newWinner == rev {
                winnerBody = bytes
                winnerVector = vector
            } else {
                let stored = try existing.bodyAndVector(db, of: newWinner)
                winnerBody = stored?.body
                winnerVector = stored?.vector
                try db.cachedStatement(sql: "DELETE FROM \(Tables.revs) WHERE doc = ? AND rev = ?")
                    .execute(arguments: [existing.rowID, newWinner.description])
            }
        } else if newWinner == rev {
            winnerBody = bytes
            winnerVector = vector
        }
        if newWinner != rev {
            try insertRev.execute(arguments: [existing.rowID, rev.description, Data(bytes), vector])
        }
        let update = try db.cachedStatement(sql: """
            UPDATE \(Tables.docs) SET seq = ?, winner = ?, deleted = ?, conflicted = ?, tree = ?, body = ?, vv = ? WHERE id = ?
            """)
        try update.execute(arguments: [
            Int64(sequence), newWinner.description, tree.isDeleted, tree.hasConflict,
            Data(tree.serialized()), winnerBody.map { Data($0) }, winnerVector, existing.rowID,
        ])
    }

    static func saveCounters(_ db: Database, _ counters: Counters, previous: Counters) throws {
        guard counters.lastSequence != previous.lastSequence || counters.docCount != previous.docCount else { return }
        let statement = try db.cachedStatement(sql: "UPDATE \(Tables.meta) SET value = ? WHERE key = ?")
        try statement.execute(arguments: [Int64(counters.lastSequence), "last_seq"])
        try statement.execute(arguments: [counters.docCount, "doc_count"])
    }
}

extension DocumentStore {
    /// A revision the store holds, received again with `incoming`: its stored vector
    /// becomes `reconciling` of the two (`storeReconciled`: a winner whose vector grew
    /// moves to a new sequence; the revision itself is not new, so no sequence is returned).
    static func reconcileVector(
        _ db: Database, _ existing: DocumentRow, docID: String, revID: RevID, incoming: VersionVector, clock: VersionClock,
        counters: inout Counters
    ) throws -> WriteResult {
        let stored = try storedVector(db, existing, of: revID)
        let reconciled = try receivedVector(incoming, existing: stored, parent: nil)
        clock.observe(incoming)
        if let stored, reconciled != stored {
            try storeReconciled(db, existing, rev: revID, reconciled, counters: &counters)
        }
        return WriteResult(docID: docID, revID: revID, sequence: nil, version: reconciled)
    }

    /// Where a concurrent version-vector revision branches off: the newest revision on the
    /// winner's line whose current version `incoming` holds; nil when it holds none.
    static func versionBranchPoint(
        _ incoming: VersionVector, winner: RevID, tree: RevTree, db: Database, row: DocumentRow
    ) throws -> RevID? {
        for rev in tree.history(of: winner) {
            if let vector = try storedVector(db, row, of: rev), incoming.contains(vector.current) { return rev }
        }
        return nil
    }
}
