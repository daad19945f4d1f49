import DocumentModel
import DocumentStore
import Foundation
import Testing
import TestSupport

@Suite struct PersistenceTests {
    @Test func reopenedStoreHasEverythingAndContinuesSequences() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var revs: [String: RevID] = [:]
        do {
            let test = try await TestStore.make(durability: .full, directory: directory)
            for index in 0..<50 { revs["d\(index)"] = try await test.store.put("d\(index)", ["i": .int(Int64(index))]).revID }
            try await test.store.replicate("c", ["v": 1], history: ["2-ffff", "1-aaaa"])
            try await test.store.replicate("c", ["v": 2], history: ["2-0000", "1-aaaa"])
            _ = try await test.store.putLocal("cp", body: ["s": 1], rev: nil)
            await test.store.close()
        }
        let reopened = try await TestStore.make(durability: .full, directory: directory)
        defer { reopened.store.close() }
        let store = reopened.store
        #expect(store.info().docCount == 51)
        #expect(store.info().updateSequence == 52)
        for (id, rev) in revs { #expect(try await store.revision(id).1.revID == rev) }
        #expect(try await store.metadata("c")?.tree.hasConflict == true)
        #expect(try await store.localDocument("cp")?.rev == "0-1")
        let next = try await store.put("new", [:])
        #expect(next.sequence == 53)
    }

    @Test func inMemoryStoreLeavesNoFiles() async throws {
        let test = try await TestStore.make(inMemory: true)
        let blobDirectory = test.store.blobs.directory
        try await test.store.put("a", ["_attachments": ["x": ["data": "AAEC"]]])
        #expect(FileManager.default.fileExists(atPath: blobDirectory))
        // Nothing is written to the data directory.
        #expect(try FileManager.default.contentsOfDirectory(atPath: test.directory.path).isEmpty)
        await test.destroy()
        #expect(!FileManager.default.fileExists(atPath: blobDirectory))
    }
}
