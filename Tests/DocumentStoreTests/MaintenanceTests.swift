import DocumentModel
import DocumentStore
import Foundation
import Testing
import TestSupport

@Suite struct MaintenanceTests {
    @Test func compactionDropsOldBodiesKeepsLeavesAndMergeBase() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let r1 = try await store.put("doc", ["v": 1])
        let r2 = try await store.put("doc", ["v": 2], parent: r1.revID)
        try await store.put("doc", ["v": 3], parent: r2.revID)
        try await store.replicate("doc", ["v": "other"], history: ["3-0000", "2-1111", r1.revID.description])
        // Merge base of the two live leaves is r1.
        let before = try #require(try await store.metadata("doc"))
        #expect(before.tree.mergeBase == r1.revID)
        let report = try await store.compact()
        #expect(report.bodiesRemoved == 1) // r2's body
        let after = try #require(try await store.metadata("doc"))
        #expect(after.tree.node(for: r2.revID)?.hasBody == false)
        #expect(try await store.revision("doc", rev: r1.revID).1.body == ["v": 1])
        #expect(try await store.revision("doc", rev: RevID("3-0000")!).1.body == ["v": "other"])
        await expectStoreError(.notFound) { try await store.revision("doc", rev: r2.revID) }
    }

    @Test func compactionRemovesUnreferencedBlobsOnly() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let first = try await store.put("doc", ["_attachments": ["a": ["data": .string(Data("one".utf8).base64EncodedString())]]])
        let kept = try await store.put("keep", ["_attachments": ["b": ["data": .string(Data("two".utf8).base64EncodedString())]]])
        _ = kept
        try await store.put("doc", ["no": "attachments"], parent: first.revID)
        let orphan = try await store.blobs.store(Array("orphan".utf8))
        // Young blobs survive (a write may be about to use them)…
        var report = try await store.compact(blobGracePeriod: 3600)
        #expect(report.blobsRemoved == 0)
        // …old unreferenced ones go; referenced ones stay.
        report = try await store.compact(blobGracePeriod: -1)
        #expect(report.blobsRemoved == 2)
        #expect(!store.blobs.contains(orphan.digest))
        let b = try #require(try await store.revision("keep").1.attachments["b"])
        #expect(store.blobs.contains(b.digest))
    }

    @Test func purgeWholeDocumentAndSingleLeaf() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        try await store.put("gone", ["v": 1])
        try await store.replicate("two", ["v": "a"], history: ["2-ffff", "1-aaaa"])
        try await store.replicate("two", ["v": "b"], history: ["2-0000", "1-aaaa"])
        #expect(store.info().docCount == 2)
        let purged = try await store.purge([("gone", nil), ("two", [RevID("2-ffff")!]), ("unknown", nil)])
        #expect(purged.map(\.docID) == ["gone", "two"])
        #expect(try await store.metadata("gone") == nil)
        let two = try #require(try await store.metadata("two"))
        #expect(two.tree.leaves == [RevID("2-0000")!])
        #expect(two.tree.contains(RevID("1-aaaa")!))
        #expect(try await store.revision("two").1.body == ["v": "b"])
        #expect(store.info().docCount == 1)
        // A purged revision can arrive again (it never existed here).
        try await store.replicate("two", ["v": "a"], history: ["2-ffff", "1-aaaa"])
        #expect(try await store.metadata("two")?.tree.hasConflict == true)
    }
}
