import DocumentModel
import DocumentStore
import Foundation
import Testing
import TestSupport

@Suite struct AttachmentTests {
    /// Content stored as a given digest is checked by the hash computed while writing:
    /// other content is dropped, neither under its own digest nor as a leftover file.
    @Test func contentThatIsNotTheExpectedDigestIsDropped() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let blobs = test.store.blobs
        let expected = "sha1-Kq5sNclPz7QV2+lfQIuc6R7oRu0="  // "hello world"
        await #expect(throws: StoreError.self) { try await blobs.store(Array("hello there".utf8), expecting: expected) }
        let files = try FileManager.default.contentsOfDirectory(atPath: blobs.directory).filter { $0 != "tmp" }
        #expect(files.isEmpty, "\(files)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: blobs.directory + "/tmp").isEmpty)
        #expect(try await blobs.store(Array("hello world".utf8), expecting: expected).digest == expected)
        #expect(await blobs.read(expected) == Array("hello world".utf8))
    }

    /// An in-memory database's blob directory (in the system's temporary directory) exists
    /// only once a blob is stored, and goes with the store: a database without attachments
    /// leaves nothing behind even when its process is killed.
    @Test func anInMemoryStoreMakesItsBlobDirectoryWithItsFirstBlob() async throws {
        let test = try await TestStore.make(inMemory: true)
        let directory = test.store.blobs.directory
        try await test.store.put("plain", ["x": 1])
        #expect(!FileManager.default.fileExists(atPath: directory))
        await #expect(test.store.blobs.read("sha1-Kq5sNclPz7QV2+lfQIuc6R7oRu0=") == nil)
        let stored = try await test.store.blobs.store(Array("hello world".utf8))
        #expect(FileManager.default.fileExists(atPath: directory))
        await #expect(test.store.blobs.read(stored.digest) == Array("hello world".utf8))
        await test.destroy()
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test func inlineDataBecomesBlobAndStubsCarryOver() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let data = Data("hello world".utf8).base64EncodedString()
        let first = try await store.put("doc", [
            "_attachments": ["a.txt": ["content_type": "text/plain", "data": .string(data)]],
        ])
        let revision = try await store.revision("doc").1
        let info = try #require(revision.attachments["a.txt"])
        #expect(info.digest == "sha1-Kq5sNclPz7QV2+lfQIuc6R7oRu0=")
        #expect(info.length == 11)
        #expect(info.revpos == 1)
        #expect(info.contentType == "text/plain")
        await #expect(store.blobs.read(info.digest) == Array("hello world".utf8))

        // A stub keeps the attachment (and its revpos) in the next revision.
        let second = try await store.put("doc", ["x": 1, "_attachments": ["a.txt": ["stub": true]]], parent: first.revID)
        let kept = try #require(try await store.revision("doc").1.attachments["a.txt"])
        #expect(kept == info)
        // Leaving `_attachments` out drops it.
        _ = try await store.put("doc", ["x": 2], parent: second.revID)
        #expect(try await store.revision("doc").1.attachments.isEmpty)
    }

    @Test func attachmentsChangeTheRevisionID() async throws {
        let test = try await TestStore.make(inMemory: true)
        defer { test.destroy() }
        let plain = try await test.store.put("a", ["x": 1])
        let with = try await test.store.put("b", ["x": 1, "_attachments": ["f": ["data": "AAEC"]]])
        #expect(plain.revID != with.revID)
    }

    @Test func missingStubAndBadDataAreRejected() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        await expectStoreError(.preconditionFailed) {
            try await store.put("doc", ["_attachments": ["a": ["stub": true]]])
        }
        await expectStoreError(.badRequest) {
            try await store.put("doc", ["_attachments": ["a": ["data": "!!!not base64!!!"]]])
        }
        await expectStoreError(.badRequest) {
            try await store.put("doc", ["_attachments": ["a": ["content_type": "text/plain"]]])
        }
        await expectStoreError(.preconditionFailed) {
            try await store.put("doc", ["_attachments": ["a": ["digest": "sha1-AAAAAAAAAAAAAAAAAAAAAAAAAAA=", "length": 3]]])
        }
        #expect(store.info().updateSequence == 0)
    }

    @Test func replicatedStubResolvesByDigest() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let stored = try await store.blobs.store(Array("payload".utf8))
        try await store.replicate("doc", [
            "_attachments": ["p": ["stub": true, "digest": .string(stored.digest), "revpos": 1]],
        ], history: ["2-bbbb", "1-aaaa"])
        let info = try #require(try await store.revision("doc").1.attachments["p"])
        #expect(info.digest == stored.digest)
        #expect(info.length == 7)
    }

    @Test func streamedBlobMatchesDigest() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let writer = try test.store.blobs.makeWriter()
        var all: [UInt8] = []
        for index in 0..<100 {
            let chunk = [UInt8](repeating: UInt8(index), count: 1000 + index)
            all += chunk
            try await writer.write(chunk)
        }
        let blob = try await writer.finish()
        #expect(blob.length == all.count)
        #expect(blob.digest == Digests.attachmentDigest(sha1: SHA1.hash(all)))
        #expect(await test.store.blobs.read(blob.digest) == all)
        // No temporary files are left behind.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: test.store.blobs.directory + "/tmp")
        #expect(leftovers.isEmpty)
    }

    @Test func cancelledWriterLeavesNothing() throws {
        let test = try TestStore()
        defer { test.destroy() }
        let writer = try test.store.blobs.makeWriter()
        try writer.write([1, 2, 3])
        writer.cancel()
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: test.store.blobs.directory + "/tmp")
        #expect(leftovers.isEmpty)
        #expect(!test.store.blobs.contains(Digests.attachmentDigest(sha1: SHA1.hash([1, 2, 3]))))
    }
}
