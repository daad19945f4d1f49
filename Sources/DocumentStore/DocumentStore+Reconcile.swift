import DocumentModel
import Foundation
import GRDB

// Vectors of one revision reconciled across nodes (docs/architecture.md §10.9,
// "Convergence"): identical edits made on two nodes are one revision (one revision ID)
// with two versions. A Shoal peer's `changes` rows carry the stored vector text of each
// winner they offer, so the node that already has the revision (and answers "have it",
// which stops the `rev` and its `shoal-vv`) still learns the peer's vector and keeps
// `reconciling` of the two. A winner whose vector grew this way gets a new sequence, so
// every feed offers it again and the grown vector travels on: reconciling is a join
// (commutative, associative, idempotent), so this ends once every node holds the same.

/// What a peer's `changes` row says of the vector of the winner it offers.
public enum OfferedVector: Sendable, Equatable {
    /// The row carries no vector (a peer that does not send them): nothing to compare.
    case unknown
    /// The peer's stored text (Sync Gateway's form); nil: the revision's legacy version alone.
    case stored(String?)
}

extension DocumentStore {
    /// `missingRevisions(_:)`, and in the same read the positions of the offers that name
    /// this store's own winner with another stored vector text than this store's: the
    /// candidates for `reconcileVectors`. Offers with `.unknown` are never candidates.
    public func missingRevisions(
        _ offered: [(docID: String, rev: RevID)], vectors: [OfferedVector]
    ) async throws(StoreError) -> (missing: [[RevID]?], differing: [Int]) {
        let compared = vectors.indices.filter { vectors[$0] != .unknown }
        guard !compared.isEmpty else { return (try await missingRevisions(offered), []) }
        return try await read { db in
            // The trees and the winners' stored vector texts (`docs.vv`) in one query.
            var trees: [String: RevTree] = [:]
            var texts: [String: String?] = [:]
            try Self.forEachDocument(db, keys: Self.distinctKeys(offered), columns: "key, tree, vv") { row in
                let key: String = row[0]
                trees[key] = try Self.tree(row, column: 1)
                texts[key] = row[2] as String?
            }
            let missing = Self.missing(offered, trees: trees)
            let differing = compared.filter { position in
                let (docID, rev) = offered[position]
                guard missing[position] == nil, trees[docID]?.winner == rev, let text = texts[docID] else { return false }
                return vectors[position] != .stored(text)
            }
            return (missing, differing)
        }
    }

    /// For offered winners the store holds (document, revision, the peer's vector): the
    /// stored vector becomes `reconciling` of the two, in one transaction; a winner whose
    /// vector changed gets a new sequence (its feeds offer it again). Returns, per offer,
    /// whether the peer lacks part of what is now stored (its vector differs from it): the
    /// peer should then be offered the revision back. An offer that no longer names the
    /// winner, or names a revision without a body, is left alone (false).
    public func reconcileVectors(
        _ offers: [(docID: String, rev: RevID, vector: VersionVector)]
    ) async throws(StoreError) -> [Bool] {
        guard !offers.isEmpty else { return [] }
        return try await write { db in
            try self.updatingCounters(db) { counters in
                var peerLacks: [Bool] = []
                peerLacks.reserveCapacity(offers.count)
                for offer in offers {
                    guard let row = try DocumentRow.load(db, key: offer.docID), row.tree.winner == offer.rev,
                          let stored = try Self.storedVector(db, row, of: offer.rev)
                    else {
                        peerLacks.append(false)
                        continue
                    }
                    let reconciled = try Self.receivedVector(offer.vector, existing: stored, parent: nil)
                    self.versionClock.observe(offer.vector)
                    if reconciled != stored {
                        try Self.storeReconciled(db, row, rev: offer.rev, reconciled, counters: &counters)
                    }
                    peerLacks.append(reconciled != offer.vector)
                }
                try self.versionClock.persist(db)
                return peerLacks
            }
        }
    }

    /// Inside a write transaction: stores `reconciled` as the vector of `rev` (held in
    /// `row`); when `rev` is the winner, the document moves to a new sequence, so the
    /// changes feeds (and the channel index) offer the grown vector again.
    static func storeReconciled(
        _ db: Database, _ row: DocumentRow, rev: RevID, _ reconciled: VersionVector, counters: inout Counters
    ) throws {
        try updateStoredVector(db, row, rev: rev, text: storedText(reconciled, revID: rev))
        guard rev == row.tree.winner else { return }
        counters.lastSequence += 1
        try indexWinnerAccess(db, docRow: row.rowID, winner: rev, access: nil, sequence: counters.lastSequence)
        try db.cachedStatement(sql: "UPDATE \(Tables.docs) SET seq = ? WHERE id = ?")
            .execute(arguments: [Int64(clamping: counters.lastSequence), row.rowID])
    }
}
