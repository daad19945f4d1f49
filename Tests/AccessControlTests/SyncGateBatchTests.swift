import AccessControl
import DocumentModel
import DocumentStore
import Testing
import TestSupport

/// A batch of writes runs the sync function once for the whole batch before its
/// transaction; a revision whose actual parent differs from the one it was evaluated
/// with (a creation over a tombstone, a conflict) is evaluated again with the right
/// `oldDoc`, so batching never changes an outcome.
@Suite struct SyncGateBatchTests {
    static let source = """
        function(doc, oldDoc) {
          if (doc.reject) throw({forbidden: "rejected " + doc._id});
          channel(oldDoc ? "old:" + oldDoc.v : "new");
          if (oldDoc && oldDoc._deleted) channel("was-deleted");
        }
        """

    @Test func batchedOutcomesMatchTheActualParent() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        store.setGate(SyncGate(function: try SyncFunction(source: Self.source)))
        func channels(_ id: String) async throws -> Set<String>? { try await store.documentChannels(docID: id) }

        let created = try await store.save(batch: ["a", "b", "c", "x"].map {
            DocumentUpdate(docID: $0, body: ["v": 1, "reject": .bool($0 == "x")], mode: .edit(parent: nil))
        })
        #expect(throws: StoreError(.forbidden, error: "forbidden", reason: "rejected x")) { try created[3].get() }
        let revs = try created.prefix(3).map { try $0.get().revID }
        #expect(try await channels("a") == ["new"])
        #expect(try await channels("x") == nil, "a rejected revision is stored nowhere")
        _ = try await store.save(DocumentUpdate(docID: "c", body: [:], deleted: true, mode: .edit(parent: revs[2])))

        let second = try await store.save(batch: [
            DocumentUpdate(docID: "a", body: ["v": 2], mode: .edit(parent: revs[0])),
            DocumentUpdate(docID: "b", body: ["v": 2], mode: .edit(parent: RevID("1-0000"))),   // not a leaf: 409
            DocumentUpdate(docID: "c", body: ["v": 3], mode: .edit(parent: nil)),                 // over the tombstone
            DocumentUpdate(docID: "d", body: ["v": 4], mode: .replicate(history: [RevID("2-dd")!, RevID("1-dd")!])),
        ])
        #expect(try await channels("a") == ["old:1"])
        #expect(throws: StoreError.self) { try second[1].get() }
        #expect(try await channels("c") == ["old:undefined", "was-deleted"])
        #expect(try await channels("d") == ["new"], "the parent of d is unknown here: oldDoc is null")
    }
}
