import DocumentModel
import DocumentStore
import Testing
import TestSupport

@Suite struct LocalDocumentTests {
    @Test func localDocumentsHaveZeroRevisionsAndMVCC() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let rev1 = try await store.putLocal("checkpoint", body: ["seq": 5], rev: nil)
        #expect(rev1 == "0-1")
        await expectStoreError(.conflict) { try await store.putLocal("checkpoint", body: ["seq": 6], rev: nil) }
        await expectStoreError(.conflict) { try await store.putLocal("checkpoint", body: ["seq": 6], rev: "0-7") }
        let rev2 = try await store.putLocal("checkpoint", body: ["seq": 6], rev: rev1)
        #expect(rev2 == "0-2")
        #expect(try await store.localDocument("checkpoint") == LocalDocument(id: "checkpoint", rev: "0-2", body: ["seq": 6]))
        // Local documents are not in the changes feed and do not count.
        #expect(try await store.changes(since: 0).isEmpty)
        #expect(store.info().docCount == 0)
        await expectStoreError(.conflict) { try await store.deleteLocal("checkpoint", rev: "0-1") }
        try await store.deleteLocal("checkpoint", rev: "0-2")
        #expect(try await store.localDocument("checkpoint") == nil)
        await expectStoreError(.notFound) { try await store.deleteLocal("checkpoint", rev: "0-2") }
    }
}
