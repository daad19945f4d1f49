import DocumentModel
import Foundation
import GRDB

/// Re-running the gate over stored documents (Sync Gateway's `_resync`): after the
/// sync function changed, every document's channels and grants are recomputed with
/// the new function, so what users can read follows the function in effect.
extension DocumentStore {
    /// What a resync did.
    public struct ResyncResult: Sendable, Equatable {
        /// Documents looked at.
        public var processed = 0
        /// Documents whose winner's channels or grants changed (each got a new sequence,
        /// so feeds show it; a channel it left reads as removed).
        public var changed = 0

        public init(processed: Int = 0, changed: Int = 0) {
            self.processed = processed
            self.changed = changed
        }
    }

    /// One leaf to evaluate again, as read before the write.
    private struct Candidate: Sendable {
        let rowID: Int64
        let winner: RevID
        let leaf: RevID
        let revision: GateRevision
    }

    /// Runs the installed gate again on the live leaves (and the deleted winner, if
    /// any) of every document, as the mesh principal (no user), with each revision's
    /// parent as `oldDoc`, and re-indexes the winners whose access changed. A revision
    /// the gate now rejects stays stored (it was accepted when written) but is in no
    /// channel and grants nothing. Documents are done in batches; a document written
    /// meanwhile was evaluated by its write and is left alone.
    ///
    /// `progress` is called with the documents in the database (before the first batch)
    /// and then after every batch with what was done so far. `total` is that count when
    /// the caller already has it (`resyncTotal`).
    public func resync(
        batchSize: Int = 500, total known: Int? = nil,
        progress: (@Sendable (_ done: ResyncResult, _ total: Int) -> Void)? = nil
    ) async throws(StoreError) -> ResyncResult {
        guard let gate else { return ResyncResult() }
        var result = ResyncResult()
        let total: Int
        if let known { total = known } else { total = try await resyncTotal() }
        progress?(result, total)
        var after: Int64 = 0
        while true {
            let (candidates, last, count) = try await resyncCandidates(after: after, limit: batchSize, readsParent: gate.readsParentBody)
            guard count > 0 else { break }
            after = last
            result.processed += count
            let outcomes = await gate.evaluate(batch: candidates.map(\.revision), author: nil)
            let accesses = outcomes.map { (try? $0.get()) ?? RevisionAccess() }
            result.changed += try await write { db in
                try self.applyResync(db, candidates: candidates, accesses: accesses)
            }
            progress?(result, total)
        }
        return result
    }

    /// The documents a resync goes through (every row, tombstones included).
    public func resyncTotal() async throws(StoreError) -> Int {
        try await scan { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM docs") ?? 0 }
    }

    /// The revisions to evaluate for the documents after row `after`: the batch's last
    /// row ID and how many documents it held.
    private func resyncCandidates(after: Int64, limit: Int, readsParent: Bool) async throws(StoreError) -> ([Candidate], Int64, Int) {
        try await read { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT \(DocumentRow.columns) FROM \(Tables.docs) WHERE id > ? ORDER BY id LIMIT ?", arguments: [after, limit])
            var candidates: [Candidate] = []
            var last = after
            for row in rows {
                let document = try DocumentRow(row: row)
                last = document.rowID
                guard let winner = document.tree.winner else { continue }
                var leaves = document.tree.liveLeaves
                if !leaves.contains(winner) { leaves.append(winner) }
                for leaf in leaves {
                    guard let node = document.tree.node(for: leaf), let body = try document.body(db, of: leaf) else { continue }
                    var parentBody: [String: JSON]?
                    var parentDeleted = false
                    if readsParent, let parent = document.tree.parent(of: leaf), let parentNode = document.tree.node(for: parent),
                       parentNode.hasBody
                    {
                        parentBody = try document.body(db, of: parent)
                        parentDeleted = parentNode.deleted
                    }
                    candidates.append(Candidate(
                        rowID: document.rowID, winner: winner, leaf: leaf,
                        revision: GateRevision(
                            docID: document.key, revID: leaf, body: body, deleted: node.deleted, parentBody: parentBody,
                            parentDeleted: parentDeleted)))
                }
            }
            return (candidates, last, rows.count)
        }
    }

    /// Stores the new access of each candidate whose document still has the same winner,
    /// and re-indexes the winners whose access changed, each at a new sequence.
    private func applyResync(
        _ db: Database, candidates: [Candidate], accesses: [RevisionAccess]
    ) throws -> Int {
        let currentWinner = try db.cachedStatement(sql: "SELECT winner FROM \(Tables.docs) WHERE id = ?")
        let setSequence = try db.cachedStatement(sql: "UPDATE \(Tables.docs) SET seq = ? WHERE id = ?")
        let saveAccess = try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(Tables.revAccess)(doc, rev, data) VALUES (?, ?, ?)")
        let dropAccess = try db.cachedStatement(sql: "DELETE FROM \(Tables.revAccess) WHERE doc = ? AND rev = ?")
        return try updatingCounters(db) { counters -> Int in
            var changed = 0
            for (candidate, access) in zip(candidates, accesses) {
                // A write since the read evaluated its revisions with the current gate.
                guard try String.fetchOne(currentWinner, arguments: [candidate.rowID]) == candidate.winner.description else { continue }
                let stored = try Self.loadAccess(db, docRow: candidate.rowID, rev: candidate.leaf) ?? RevisionAccess()
                guard stored != access else { continue }
                if access.isEmpty {
                    try dropAccess.execute(arguments: [candidate.rowID, candidate.leaf.description])
                } else {
                    try saveAccess.execute(arguments: [candidate.rowID, candidate.leaf.description, Data(access.json.canonicalBytes())])
                }
                guard candidate.leaf == candidate.winner else { continue }
                counters.lastSequence += 1
                try Self.indexWinnerAccess(
                    db, docRow: candidate.rowID, winner: candidate.winner, access: access, sequence: counters.lastSequence)
                try setSequence.execute(arguments: [Int64(clamping: counters.lastSequence), candidate.rowID])
                changed += 1
            }
            return changed
        }
    }
}

extension DocumentStore {
    /// A text fact kept in the database (`info` table), e.g. which sync function
    /// produced the stored access.
    public func infoValue(_ key: String) async throws(StoreError) -> String? {
        try await read { db in try String.fetchOne(db, sql: "SELECT value FROM \(Tables.info) WHERE key = ?", arguments: [key]) }
    }

    public func setInfoValue(_ key: String, _ value: String) async throws(StoreError) {
        try await write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO \(Tables.info)(key, value) VALUES (?, ?)", arguments: [key, value])
        }
    }
}
