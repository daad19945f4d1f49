import DocumentModel
import DocumentStore
import Testing
import TestSupport

/// Updates whose body is held as canonical bytes (`ObjectBody(canonical:)`, what a
/// replicated revision arrives as) are stored byte for byte, on every write path: a new
/// document, a child of a stored revision, a conflicting branch, an edit; and they are
/// refused like parsed bodies when too large.
@Suite struct CanonicalBodyWriteTests {
    static func object(_ text: String) throws -> ObjectBody {
        try #require(ObjectBody(canonical: Array(text.utf8)))
    }

    static func replicated(_ docID: String, _ text: String, _ history: [String]) throws -> DocumentUpdate {
        DocumentUpdate(docID: docID, object: try object(text), mode: .replicate(history: history.compactMap(RevID.init)))
    }

    func stored(_ store: DocumentStore, _ docID: String, _ rev: String) async throws -> [UInt8]? {
        try await store.revisionsToSend([(docID, RevID(rev)!)]).first??.bodyBytes
    }

    @Test func bytesAreStoredAsTheyArrived() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let first = #"{"n":1,"tags":["a","b"],"total":1842.37}"#
        let child = #"{"n":2,"tags":[],"total":0.21}"#
        let branch = #"{"n":3}"#
        let results = try await store.save(batch: [
            try Self.replicated("d", first, ["1-aa"]),
            try Self.replicated("e", first, ["2-ee", "1-ee"]),
        ])
        #expect(results.allSatisfy { (try? $0.get()) != nil })
        _ = try await store.save(try Self.replicated("d", child, ["2-bb", "1-aa"]))
        _ = try await store.save(try Self.replicated("d", branch, ["2-cc", "1-aa"]))
        #expect(try await stored(store, "d", "2-bb") == Array(child.utf8))
        #expect(try await stored(store, "d", "2-cc") == Array(branch.utf8))
        #expect(try await stored(store, "e", "2-ee") == Array(first.utf8))
        let (metadata, revision) = try await store.revision("d")
        #expect(metadata.tree.leaves.count == 2)
        #expect(revision.body == (try JSON.parse(metadata.tree.winner == RevID("2-cc") ? branch : child)).objectValue)

        // An edit with a canonical body gets the revision ID a parsed body gets.
        let edited = try await store.save(DocumentUpdate(docID: "f", object: try Self.object(child), mode: .edit(parent: nil)))
        let parsed = try await store.save(DocumentUpdate(
            docID: "g", body: try #require(try JSON.parse(child).objectValue), mode: .edit(parent: nil)))
        #expect(edited.revID == parsed.revID)
        #expect(try await stored(store, "f", edited.revID.description) == Array(child.utf8))
    }

    @Test func refusedLikeParsedBodies() async throws {
        let test = try await TestStore.make(maxDocumentSize: 64)
        defer { test.destroy() }
        let big = #"{"notes":""# + String(repeating: "x", count: 100) + #""}"#
        await #expect(throws: StoreError.self) { try await test.store.save(try Self.replicated("big", big, ["1-aa"])) }
        await #expect(throws: StoreError.self) {
            try await test.store.save(DocumentUpdate(docID: "_bad", object: try Self.object("{}"), mode: .replicate(history: [RevID("1-aa")!])))
        }
        // A reserved key in canonical bytes is refused, as in a parsed body.
        await #expect(throws: StoreError.self) {
            try await test.store.save(try Self.replicated("u", #"{"_private":1}"#, ["1-aa"]))
        }
    }
}
