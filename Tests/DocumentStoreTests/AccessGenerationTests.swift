import DocumentModel
import DocumentStore
import Testing
import TestSupport

/// `accessGeneration` moves on after every commit that changes principals or grants
/// (any collection, any code path) and stays put for writes that change neither, so
/// that access computed from them can be kept until it does.
@Suite struct AccessGenerationTests {
    /// Grants what the body asks for: `grant` (a channel) to `user`, `role` to `user`.
    struct GrantingGate: RevisionGate {
        var readsParentBody: Bool { false }
        func evaluate(_ revision: GateRevision, author: (any Sendable)?) throws(StoreError) -> RevisionAccess {
            let body = revision.body
            guard let user = body["user"]?.stringValue else { return RevisionAccess(channels: ["plain"]) }
            var access = RevisionAccess(channels: ["grants"])
            if let channel = body["grant"]?.stringValue { access.access[user] = [channel] }
            if let role = body["role"]?.stringValue { access.roles[user] = [role] }
            return access
        }
    }

    @Test func principalsAndGrantsMoveItOtherWritesDoNot() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        store.setGate(GrantingGate())
        var last = store.accessGeneration
        func moved() -> Bool {
            defer { last = store.accessGeneration }
            return store.accessGeneration != last
        }

        try await store.put("plain", ["n": 1])
        _ = try await store.save(batch: (0..<20).map { DocumentUpdate(docID: "p\($0)", body: ["n": .number(Double($0))], mode: .edit(parent: nil)) })
        #expect(!moved(), "documents without grants leave it alone")

        _ = try await store.savePrincipal(.user, name: "alice", body: ["name": "alice"])
        #expect(moved(), "a saved user")
        let grant = try await store.put("g", ["user": "alice", "grant": "news"])
        #expect(moved(), "a new document's channel grant")
        let edited = try await store.put("g", ["user": "alice", "grant": "news", "v": 2], parent: grant.revID)
        #expect(!moved(), "the same grants again change no row")
        _ = try await store.put("g", ["user": "alice", "grant": "sports"], parent: edited.revID)
        #expect(moved(), "a grant replaced")
        try await store.put("r", ["user": "alice", "role": "editor"])
        #expect(moved(), "a role grant")
        #expect(try await store.deletePrincipal(.user, name: "alice"))
        #expect(moved(), "a deleted user")
        #expect(try await !store.deletePrincipal(.user, name: "nobody"))
        #expect(!moved(), "deleting nothing changes nothing")

        // A named collection, opened after the store: its grants count too, and so do
        // those of a collection created by an earlier run (reopened below).
        let lists = try store.collection(CollectionName(scope: "_default", name: "lists")!)
        lists.setGate(GrantingGate())
        try await lists.put("x", ["n": 1])
        #expect(!moved())
        try await lists.put("g", ["user": "bob", "grant": "lists"])
        #expect(moved(), "a named collection's grant")
        #expect(lists.accessGeneration == store.accessGeneration, "one counter per database")
        _ = try await store.purge([(docID: "r", revs: nil)])
        #expect(moved(), "a purge removes the document's grants")
    }

    @Test func aRejectedWriteDoesNotMoveItAndAReopenedStoreStillTracks() async throws {
        let directory = TemporaryDirectory()
        do {
            let test = try await TestStore.make(directory: directory)
            let lists = try test.store.collection(CollectionName(scope: "app", name: "lists")!)
            lists.setGate(GrantingGate())
            test.store.setGate(GrantingGate())
            // Rejected before its transaction commits: nothing moves.
            let before = test.store.accessGeneration
            await #expect(throws: StoreError.self) {
                try await test.store.put("g", ["user": "carol", "grant": "c"], parent: RevID("1-missing"))
            }
            #expect(test.store.accessGeneration == before)
            await test.store.close()
        }
        let test = try await TestStore.make(directory: directory)
        defer { test.destroy() }
        let lists = try test.store.collection(CollectionName(scope: "app", name: "lists")!)
        lists.setGate(GrantingGate())
        let before = test.store.accessGeneration
        try await lists.put("g", ["user": "carol", "grant": "c"])
        #expect(test.store.accessGeneration == before + 1, "a collection of an earlier run is tracked after a reopen")
    }

    @Test func aRekeyedStoreStillTracks() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        _ = try await test.store.rekey(to: .key(Array(repeating: 7, count: 32)))
        let before = test.store.accessGeneration
        _ = try await test.store.savePrincipal(.role, name: "editor", body: ["name": "editor"])
        #expect(test.store.accessGeneration == before + 1, "the new writer connection has the triggers")
    }
}
