import DocumentModel
import DocumentStore
import Testing
import TestSupport

/// `DocumentUpdate.noConflicts` (Sync Gateway's no-conflicts mode for clients): a
/// replicated revision is stored only if it continues the current winner; a branch is
/// refused with 409 inside the write transaction and nothing of it is stored.
@Suite struct NoConflictsTests {
    static func replicated(_ docID: String, _ history: [String], deleted: Bool = false) -> DocumentUpdate {
        DocumentUpdate(docID: docID, body: ["v": .string(history[0])], deleted: deleted,
                       mode: .replicate(history: history.compactMap(RevID.init)), noConflicts: true)
    }

    @Test func onlyChildrenOfTheWinnerAreStored() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        // Absent: any history.
        _ = try await store.save(Self.replicated("d", ["2-b", "1-a"]))
        // A child of the winner.
        _ = try await store.save(Self.replicated("d", ["3-c", "2-b", "1-a"]))
        // A branch from an older revision, and a history unrelated to the document.
        for history in [["3-x", "2-x", "1-a"], ["2-y", "1-y"]] {
            await #expect(throws: StoreError.self, "\(history)") { try await store.save(Self.replicated("d", history)) }
        }
        var tree = try #require(try await store.metadata("d")).tree
        #expect(tree.leaves == [RevID("3-c")!])
        #expect(!tree.contains(RevID("2-x")!) && !tree.contains(RevID("1-y")!))
        // A revision already held is no conflict.
        _ = try await store.save(Self.replicated("d", ["2-b", "1-a"]))
        // Deleted: a new history may start over it; an edit of an older revision may not.
        _ = try await store.save(Self.replicated("d", ["4-t", "3-c", "2-b", "1-a"], deleted: true))
        await #expect(throws: StoreError.self) { try await store.save(Self.replicated("d", ["4-z", "3-c", "2-b", "1-a"])) }
        _ = try await store.save(Self.replicated("d", ["1-n"]))
        tree = try #require(try await store.metadata("d")).tree
        #expect(tree.winner == RevID("1-n")!)
        // Without the flag (the mesh), branches are kept as conflicts.
        var branch = Self.replicated("d", ["4-z", "3-c", "2-b", "1-a"])
        branch.noConflicts = false
        _ = try await store.save(branch)
        #expect(try await store.metadata("d")?.tree.contains(RevID("4-z")!) == true)
    }
}
