import DocumentModel
import DocumentStore
import Foundation
import Query
import Testing
import TestSupport

/// `offset` read from the block counts (`ViewBlocks`) equals a brute-force count of the
/// rows before the range, through random edits, deletes and block splits, ascending and
/// descending, with and without `startkey_docid`.
@Suite struct ViewBlocksTests {
    private struct Emitted {
        let key: Int
        let id: String
    }

    @Test func offsetMatchesBruteForceThroughSplitsAndDeletes() async throws {
        let test = try await TestStore.make(inMemory: true)
        defer { test.destroy() }
        let store = test.store
        let map = "function(doc) { emit(doc.k, null); if (doc.k % 3 == 0) emit(doc.k + 1, null); }"
        try await store.put("_design/app", ["views": ["v": ["map": .string(map)]]])
        let views = ViewEngine(store: store, options: .init(batchSize: 150, updatesInBackground: false))
        var generator = SplitMix64(seed: 0xB10C)
        var live: [String: (k: Int, rev: RevID)] = [:]
        for round in 0..<4 {
            // Round 0 writes 1,400 documents (blocks split); later rounds edit and delete.
            let writes = round == 0 ? 1_400 : 400
            for _ in 0..<writes {
                let id = "d\(Int.random(in: 0..<1_600, using: &generator))"
                if let existing = live[id], round > 0, Int.random(in: 0..<3, using: &generator) == 0 {
                    try await store.put(id, [:], parent: existing.rev, deleted: true)
                    live[id] = nil
                    continue
                }
                let k = Int.random(in: 0..<200, using: &generator)
                let written = try await store.put(id, ["k": .int(Int64(k))], parent: live[id]?.rev)
                live[id] = (k, written.revID)
            }
            var emitted: [Emitted] = []
            for (id, doc) in live {
                emitted.append(Emitted(key: doc.k, id: id))
                if doc.k % 3 == 0 { emitted.append(Emitted(key: doc.k + 1, id: id)) }
            }
            for _ in 0..<25 {
                let start = Int.random(in: -5..<210, using: &generator)
                let docID: String? = Bool.random(using: &generator) ? "d\(Int.random(in: 0..<1_600, using: &generator))" : nil
                let descending = Bool.random(using: &generator)
                var query = ViewQuery()
                query.update = .true
                query.startKey = .int(Int64(start))
                query.startKeyDocID = docID
                query.descending = descending
                query.limit = 3
                guard case .rows(let total, let offset, _, _) = try await views.query(design: "app", view: "v", query: query) else {
                    Issue.record("no rows")
                    return
                }
                let before = emitted.filter { row in
                    let (a, b) = descending ? (start, row.key) : (row.key, start)
                    if a != b { return a < b }
                    guard let docID else { return false }
                    return descending ? docID.utf8.lexicographicallyPrecedes(row.id.utf8) : row.id.utf8.lexicographicallyPrecedes(docID.utf8)
                }
                #expect(total == emitted.count, "round \(round)")
                #expect(offset == before.count, "round \(round) start \(start) docid \(docID ?? "-") descending \(descending)")
            }
        }
    }
}
