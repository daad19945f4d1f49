import DocumentModel
import DocumentStore
import Testing
import TestSupport

@Suite struct ChangesTests {
    @Test func feedListsEachDocumentOnceAtItsLatestSequence() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let a = try await store.put("a", ["n": 1])
        try await store.put("b", ["n": 1])
        try await store.put("a", ["n": 2], parent: a.revID)
        let c = try await store.put("c", ["n": 1])
        try await store.put("c", [:], parent: c.revID, deleted: true)
        let all = try await store.changes(since: 0)
        #expect(all.map(\.docID) == ["b", "a", "c"])
        #expect(all.map(\.sequence) == [2, 3, 5])
        #expect(all.last?.deleted == true)
        #expect(try await store.changes(since: 3).map(\.docID) == ["c"])
        #expect(try await store.changes(since: 0, limit: 2).map(\.docID) == ["b", "a"])
        #expect(try await store.changes(since: 0, activeOnly: true).map(\.docID) == ["b", "a"])
        #expect(try await store.changes(since: 0, docIDs: ["c", "b"]).map(\.docID) == ["b", "c"])
        let withBodies = try await store.changes(since: 0, includeBodies: true)
        #expect(withBodies[1].body == ["n": 2])
    }

    @Test func waitForChangeWakesOnCommitAndTimesOut() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        #expect(await store.waitForChange(after: 0, timeout: .milliseconds(20)) == false)
        async let woken = store.waitForChange(after: 0, timeout: .seconds(30))
        try await Task.sleep(for: .milliseconds(50))
        try await store.put("x", [:])
        #expect(await woken == true)
        // Already past: returns at once.
        #expect(await store.waitForChange(after: 0, timeout: .seconds(30)) == true)
    }

    @Test func sequenceUpdatesStreamYieldsCommits() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        var iterator = store.sequenceUpdates().makeAsyncIterator()
        #expect(await iterator.next() == 0)
        try await store.put("x", [:])
        #expect(await iterator.next() == 1)
    }

    @Test func allDocsRangesAndConflicts() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        for id in ["a", "b", "c", "d"] { try await store.put(id, ["id": .string(id)]) }
        try await store.replicate("b", ["v": 2], history: ["2-ffff", "1-aaaa"])
        var query = AllDocsQuery()
        #expect(try await store.allDocs(query).map(\.docID) == ["a", "b", "c", "d"])
        query.startKey = "b"
        query.endKey = "c"
        #expect(try await store.allDocs(query).map(\.docID) == ["b", "c"])
        query.inclusiveEnd = false
        #expect(try await store.allDocs(query).map(\.docID) == ["b"])
        query = AllDocsQuery()
        query.descending = true
        query.limit = 2
        query.skip = 1
        #expect(try await store.allDocs(query).map(\.docID) == ["c", "b"])
        query = AllDocsQuery()
        query.onlyConflicts = true
        // "b" has two roots (1-… from the edit and 1-aaaa from replication): a conflict.
        #expect(try await store.allDocs(query).map(\.docID) == ["b"])
        let keyed = try await store.documents(["d", "zz"], includeBodies: true)
        #expect(keyed[0]?.body == ["id": "d"])
        #expect(keyed[1] == nil)
    }
}
