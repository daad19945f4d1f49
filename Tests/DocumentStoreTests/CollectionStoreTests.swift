import DocumentModel
import DocumentStore
import Testing
import TestSupport

@Suite struct CollectionStoreTests {
    let lists = CollectionName(scope: "_default", name: "lists")!
    let tasks = CollectionName(scope: "app", name: "tasks")!

    @Test func collectionsHaveTheirOwnDocumentsSequencesAndFeeds() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let database = test.store
        let listStore = try database.collection(lists)
        let taskStore = try database.collection(tasks)
        #expect(try database.collection(lists) === listStore)
        #expect(try listStore.collection(.default) === database)

        try await database.put("doc", ["in": "default"])
        let a = try await listStore.put("doc", ["in": "lists"])
        try await listStore.put("other", ["in": "lists"])
        let t = try await taskStore.put("task", ["in": "tasks"])
        #expect(a.sequence == 1)
        #expect(t.sequence == 1)
        #expect(database.info().updateSequence == 1)
        #expect(listStore.info().updateSequence == 2)
        #expect(listStore.info().docCount == 2)
        #expect(taskStore.info().docCount == 1)
        #expect(try await database.revision("doc").1.body == ["in": "default"])
        #expect(try await listStore.revision("doc").1.body == ["in": "lists"])
        await expectStoreError(.notFound) { try await taskStore.revision("doc") }
        #expect(try await listStore.changes(since: 0).map(\.docID) == ["doc", "other"])
        #expect(try await taskStore.changes(since: 0).map(\.docID) == ["task"])
        #expect(try await database.changes(since: 0).map(\.docID) == ["doc"])
        #expect(listStore.uuid != database.uuid && !listStore.uuid.isEmpty)

        _ = try await listStore.putLocal("checkpoint/x", body: ["seq": 2], rev: nil)
        #expect(try await database.localDocument("checkpoint/x") == nil)
        #expect(try await listStore.localDocument("checkpoint/x")?.body == ["seq": 2])
        #expect(try await database.storedCollections() == [tasks, lists].sorted())
    }

    @Test func collectionsSurviveAReopenAndShareThePrincipals() async throws {
        let directory = TemporaryDirectory()
        do {
            let test = try await TestStore.make(directory: directory)
            let listStore = try test.store.collection(lists)
            try await listStore.put("l1", ["n": 1])
            try await test.store.put("d1", ["n": 0])
            try await listStore.savePrincipal(.user, name: "alice", body: ["name": "alice"])
            await test.store.close()
        }
        let test = try await TestStore.make(directory: directory)
        defer { test.destroy() }
        #expect(try await test.store.storedCollections() == [lists])
        let listStore = try test.store.collection(lists)
        #expect(listStore.info().updateSequence == 1)
        #expect(try await listStore.revision("l1").1.body == ["n": 1])
        #expect(try await test.store.revision("d1").1.body == ["n": 0])
        #expect(try await test.store.principal(.user, named: "alice") != nil)
        #expect(try await listStore.principal(.user, named: "alice") != nil)
    }

    /// A rekey re-encrypts the whole file, collections included, and they go on
    /// through the new connections.
    @Test func collectionsFollowARekey() async throws {
        let directory = TemporaryDirectory()
        let key = EncryptionKey.key(Array(repeating: 0x5A, count: 32))
        do {
            let test = try await TestStore.make(directory: directory)
            let listStore = try test.store.collection(lists)
            try await listStore.put("before", ["n": 1])
            _ = try await test.store.rekey(to: key)
            try await listStore.put("after", ["n": 2])
            #expect(listStore.isEncrypted)
            #expect(try await listStore.changes(since: 0).map(\.docID) == ["before", "after"])
            await test.store.close()
        }
        let test = try await TestStore.make(directory: directory, encryption: key)
        defer { test.destroy() }
        let listStore = try test.store.collection(lists)
        #expect(try await listStore.revision("after").1.body == ["n": 2])
        #expect(listStore.info().docCount == 2)
    }

    @Test func compactionKeepsBlobsOfNamedCollections() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let listStore = try test.store.collection(lists)
        let blob = try await test.store.blobs.store([UInt8]("hello".utf8))
        let attachments: JSON = ["a.txt": ["digest": .string(blob.digest), "length": 5, "content_type": "text/plain", "stub": true, "revpos": 1]]
        try await listStore.put("doc", ["_attachments": attachments])
        let report = try await test.store.compact(blobGracePeriod: 0)
        #expect(report.blobsRemoved == 0)
        await #expect(test.store.blobs.read(blob.digest) == [UInt8]("hello".utf8))
    }

    @Test func collectionNamesFollowSyncGatewaysRule() {
        #expect(CollectionName("lists") == CollectionName(scope: "_default", name: "lists"))
        #expect(CollectionName("app.tasks")?.scope == "app")
        #expect(CollectionName("_default._default")?.isDefault == true)
        #expect(CollectionName("a.b.c") == nil)
        #expect(CollectionName("app._default") == nil)
        #expect(CollectionName("_default.app")?.name == "app")
        #expect(CollectionName("_private") == nil)
        #expect(CollectionName("has space") == nil)
        #expect(CollectionName("") == nil)
        #expect(CollectionName("ok-name_1%") != nil)
    }
}
