import DocumentModel
import Foundation
import GRDB

/// What a compaction removed.
public struct CompactionReport: Sendable, Equatable {
    public var bodiesRemoved = 0
    public var blobsRemoved = 0
}

extension DocumentStore {
    /// Drops bodies no longer needed (non-leaf revisions that are not the merge base
    /// of live leaves) and attachment blobs no revision refers to. Blobs younger than
    /// `blobGracePeriod` seconds are kept: a write may be about to refer to them.
    @discardableResult
    public func compact(blobGracePeriod: TimeInterval = 60) async throws(StoreError) -> CompactionReport {
        var report = CompactionReport()
        let docRows: [Int64] = try await scan { db in try Int64.fetchAll(db, sql: "SELECT DISTINCT doc FROM \(Tables.revs)") }
        for chunk in stride(from: 0, to: docRows.count, by: 256).map({ Array(docRows[$0..<min($0 + 256, docRows.count)]) }) {
            report.bodiesRemoved += try await write { db in try Self.compactBodies(db, docRows: chunk) }
        }
        let referenced: Set<String> = try await scan { db in
            // Blobs are the database's: every collection's bodies count.
            var digests = Set<String>()
            for tables in try Self.allTableSets(db) {
                try Tables.with(tables) {
                    for sql in ["SELECT body FROM \(Tables.docs) WHERE body IS NOT NULL", "SELECT body FROM \(Tables.revs)"] {
                        let cursor = try Data.fetchCursor(db, sql: sql)
                        while let bytes = try cursor.next() {
                            guard let body = try? DocumentRow.decode([UInt8](bytes)) else { continue }
                            for info in AttachmentInfo.parse(body["_attachments"]).values { digests.insert(info.digest) }
                        }
                    }
                }
            }
            return digests
        }
        let cutoff = Date().addingTimeInterval(-blobGracePeriod)
        for digest in blobs.allDigests() where !referenced.contains(digest) {
            guard let path = blobs.existingFile(for: digest)?.path,
                  let modified = try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date,
                  modified <= cutoff
            else { continue }
            blobs.remove(digest)
            report.blobsRemoved += 1
        }
        try? await accessGate.shared {
            try await writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        }
        logger.info("compacted \(name): \(report.bodiesRemoved) bodies, \(report.blobsRemoved) blobs removed")
        return report
    }

    private static func compactBodies(_ db: Database, docRows: [Int64]) throws -> Int {
        var removed = 0
        let select = try db.cachedStatement(sql: "SELECT \(DocumentRow.columns) FROM \(Tables.docs) WHERE id = ?")
        let revsOf = try db.cachedStatement(sql: "SELECT rev FROM \(Tables.revs) WHERE doc = ?")
        let delete = try db.cachedStatement(sql: "DELETE FROM \(Tables.revs) WHERE doc = ? AND rev = ?")
        for rowID in docRows {
            guard let row = try Row.fetchOne(select, arguments: [rowID]) else {
                try db.execute(sql: "DELETE FROM \(Tables.revs) WHERE doc = ?", arguments: [rowID])
                continue
            }
            var doc = try DocumentRow(row: row)
            var keep = Set(doc.tree.leaves)
            if let base = doc.tree.mergeBase { keep.insert(base) }
            var changed = false
            for revString in try String.fetchAll(revsOf, arguments: [rowID]) {
                guard let rev = RevID(revString), keep.contains(rev) else {
                    try delete.execute(arguments: [rowID, revString])
                    if let rev = RevID(revString), doc.tree.contains(rev) { doc.tree.setHasBody(rev, false) }
                    removed += 1
                    changed = true
                    continue
                }
            }
            if changed {
                try db.execute(
                    sql: "UPDATE \(Tables.docs) SET tree = ? WHERE id = ?", arguments: [Data(doc.tree.serialized()), rowID])
            }
        }
        return removed
    }

    /// Removes revisions as if they had never existed (`_purge`). For each document,
    /// the leaf revisions to purge (with the ancestors only they use), or nil for the
    /// whole document. Returns what was purged per document.
    public func purge(_ request: [(docID: String, revs: [RevID]?)]) async throws(StoreError) -> [(docID: String, revs: [RevID])] {
        try await write { db in
            try self.updatingCounters(db) { counters in
                var purged: [(docID: String, revs: [RevID])] = []
                for (docID, revs) in request {
                    guard let doc = try DocumentRow.load(db, key: docID) else { continue }
                    let wasLive = !doc.tree.isDeleted
                    let leaves = Set(doc.tree.leaves)
                    let targets = revs.map { Set($0).intersection(leaves) } ?? leaves
                    guard !targets.isEmpty else { continue }
                    if targets == leaves {
                        try db.execute(sql: "DELETE FROM \(Tables.revs) WHERE doc = ?", arguments: [doc.rowID])
                        try db.execute(sql: "DELETE FROM \(Tables.docs) WHERE id = ?", arguments: [doc.rowID])
                        try Self.removeAccess(db, docRow: doc.rowID)
                        if wasLive { counters.docCount -= 1 }
                        purged.append((docID, doc.tree.leaves.filter(targets.contains)))
                        continue
                    }
                    counters.lastSequence += 1
                    let (tree, removed) = doc.tree.removingLeaves(targets)
                    let delete = try db.cachedStatement(sql: "DELETE FROM \(Tables.revs) WHERE doc = ? AND rev = ?")
                    for rev in removed { try delete.execute(arguments: [doc.rowID, rev.description]) }
                    var body = doc.winnerBody
                    var vector = doc.winnerVector
                    if tree.winner != doc.tree.winner, let winner = tree.winner {
                        let stored = try doc.bodyAndVector(db, of: winner)
                        (body, vector) = (stored?.body, stored?.vector)
                        try delete.execute(arguments: [doc.rowID, winner.description])
                    }
                    try db.execute(
                        sql: "UPDATE \(Tables.docs) SET seq = ?, winner = ?, deleted = ?, conflicted = ?, tree = ?, body = ?, vv = ? WHERE id = ?",
                        arguments: [
                            Int64(counters.lastSequence), tree.winner!.description, tree.isDeleted, tree.hasConflict,
                            Data(tree.serialized()), body.map { Data($0) }, vector, doc.rowID,
                        ])
                    for rev in removed {
                        try db.execute(sql: "DELETE FROM \(Tables.revAccess) WHERE doc = ? AND rev = ?", arguments: [doc.rowID, rev.description])
                    }
                    if tree.winner != doc.tree.winner, let winner = tree.winner {
                        try Self.indexWinnerAccess(db, docRow: doc.rowID, winner: winner, access: nil, sequence: counters.lastSequence)
                    }
                    counters.docCount += Int64((tree.isDeleted ? 0 : 1) - (wasLive ? 1 : 0))
                    purged.append((docID, doc.tree.leaves.filter(targets.contains)))
                }
                if !purged.isEmpty {
                    counters.purgeSequence += 1
                    try db.execute(sql: "UPDATE \(Tables.meta) SET value = ? WHERE key = 'purge_seq'", arguments: [counters.purgeSequence])
                }
                return purged
            }
        }
    }
}

extension RevTree {
    /// A copy without the given leaves and the ancestors that only they used.
    func removingLeaves(_ targets: Set<RevID>) -> (RevTree, [RevID]) {
        var childCount = [Int](repeating: 0, count: nodes.count)
        for node in nodes { if let parent = node.parent { childCount[parent] += 1 } }
        var removed = Set<Int>()
        for leaf in targets {
            guard var index = self.index(of: leaf) else { continue }
            removed.insert(index)
            while let parent = nodes[index].parent {
                childCount[parent] -= 1
                guard childCount[parent] == 0 else { break }
                removed.insert(parent)
                index = parent
            }
        }
        var tree = RevTree()
        for (index, node) in nodes.enumerated() where !removed.contains(index) {
            var history = [node.revID]
            if let parent = node.parent, !removed.contains(parent) { history.append(nodes[parent].revID) }
            _ = try? tree.insert(history: history, deleted: node.deleted, hasBody: node.hasBody, sequence: node.sequence)
        }
        return (tree, removed.map { nodes[$0].revID })
    }
}

extension DocumentStore {
    /// SQLite's `PRAGMA integrity_check`: `["ok"]` for a sound database, else its findings.
    public func integrityCheck() async throws(StoreError) -> [String] {
        try await scan { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }
}
