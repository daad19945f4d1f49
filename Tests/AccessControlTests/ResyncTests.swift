import AccessControl
import DocumentModel
import DocumentStore
import Testing
import TestSupport

/// `_resync`: after the sync function changes, every document's channels and grants
/// are recomputed with the new function, feeds show the moves, and a database that
/// already matches its function is left alone.
@Suite struct ResyncTests {
    static let byColor = "function(doc, oldDoc) { channel('color-' + doc.color); }"
    static let byShape = """
        function(doc, oldDoc) {
          if (doc.shape == 'bad') throw({forbidden: 'no'});
          channel('shape-' + doc.shape);
          if (doc.owner) access(doc.owner, 'shape-' + doc.shape);
        }
        """

    @Test func newFunctionMovesChannelsAndGrants() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        var security = DatabaseSecurity(store: store, syncFunction: try SyncFunction(source: Self.byColor))
        #expect(try await security.resyncIfFunctionChanged() == DocumentStore.ResyncResult(processed: 0, changed: 0),
                "a fresh database remembers its function")
        #expect(try await security.resyncIfFunctionChanged() == nil)
        let docs: [(String, String, String)] = [("a", "red", "square"), ("b", "red", "round"), ("c", "blue", "bad")]
        for (id, color, shape) in docs {
            _ = try await store.save(DocumentUpdate(
                docID: id, body: ["color": .string(color), "shape": .string(shape), "owner": "ann"], mode: .edit(parent: nil)))
        }
        #expect(try await store.documentChannels(docID: "a") == ["color-red"])
        let before = store.info().updateSequence

        // The node restarts with another function.
        security = DatabaseSecurity(store: store, syncFunction: try SyncFunction(source: Self.byShape))
        let result = try await security.resyncIfFunctionChanged()
        #expect(result == DocumentStore.ResyncResult(processed: 3, changed: 3))
        #expect(try await store.documentChannels(docID: "a") == ["shape-square"])
        #expect(try await store.documentChannels(docID: "b") == ["shape-round"])
        #expect(try await store.documentChannels(docID: "c") == [], "now rejected: kept, but in no channel")
        #expect(Set(try await store.channelGrants(to: ["ann"]).map(\.channel)) == ["shape-square", "shape-round"])
        #expect(store.info().updateSequence == before + 3, "each changed document got a new sequence")

        // The old channel's feed says the documents left it; the new one lists them.
        let old = try await store.changes(since: before, channels: ["color-red": 0])
        #expect(Set(old.filter(\.isRemoval).map(\.listing.docID)) == ["a", "b"])
        let new = try await store.changes(since: 0, channels: ["shape-square": 0])
        #expect(new.map(\.listing.docID) == ["a"])

        // Nothing changed: a second resync changes nothing, and a restart does not resync.
        #expect(try await security.resync() == DocumentStore.ResyncResult(processed: 3, changed: 0))
        #expect(try await security.resyncIfFunctionChanged() == nil)
    }
}
