import DocumentModel
import DocumentStore
import Testing
import TestSupport

@Suite struct DocumentStoreWriteTests {
    @Test func createReadUpdate() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let first = try await store.put("doc", ["name": "a"])
        #expect(first.revID.generation == 1)
        #expect(first.sequence == 1)
        let second = try await store.put("doc", ["name": "b"], parent: first.revID)
        #expect(second.revID.generation == 2)
        let (metadata, revision) = try await store.revision("doc")
        #expect(revision.revID == second.revID)
        #expect(revision.body == ["name": "b"])
        #expect(metadata.tree.history(of: second.revID) == [second.revID, first.revID])
        #expect(store.info().docCount == 1)
        #expect(store.info().updateSequence == 2)
    }

    @Test func revisionIDsAreDeterministicAcrossStores() async throws {
        let a = try await TestStore.make(inMemory: true)
        let b = try await TestStore.make(inMemory: true)
        defer { a.destroy(); b.destroy() }
        let ra = try await a.store.put("doc", ["x": 1, "y": ["z": true]])
        let rb = try await b.store.put("doc", ["y": ["z": true], "x": 1])
        #expect(ra.revID == rb.revID)
        let expected = RevID.compute(parent: nil, deleted: false, canonicalBody: RevisionBody.digestBody(["x": 1, "y": ["z": true]]))
        #expect(ra.revID == expected)
    }

    @Test func mvccRejectsStaleOrMissingParent() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let first = try await store.put("doc", ["v": 1])
        _ = try await store.put("doc", ["v": 2], parent: first.revID)
        await expectStoreError(.conflict) { try await store.put("doc", ["v": 3], parent: first.revID) }
        await expectStoreError(.conflict) { try await store.put("doc", ["v": 3]) }
        await expectStoreError(.conflict) { try await store.put("doc", ["v": 3], parent: RevID("9-abc")!) }
        await expectStoreError(.conflict) { try await store.put("other", ["v": 1], parent: RevID("1-abc")!) }
        #expect(store.info().updateSequence == 2)
    }

    @Test func deleteAndRecreateExtendsTombstone() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let first = try await store.put("doc", ["v": 1])
        let tombstone = try await store.put("doc", [:], parent: first.revID, deleted: true)
        #expect(store.info().docCount == 0)
        await expectStoreError(.notFound, reason: "deleted") { try await store.revision("doc") }
        let tombRevision = try await store.revision("doc", rev: tombstone.revID).1
        #expect(tombRevision.deleted)
        await expectStoreError(.conflict) { try await store.put("doc", [:], parent: tombstone.revID, deleted: true) }
        let recreated = try await store.put("doc", ["v": 2])
        #expect(recreated.revID.generation == 3)
        #expect(try await store.metadata("doc")?.tree.parent(of: recreated.revID) == tombstone.revID)
        #expect(store.info().docCount == 1)
    }

    @Test func replicatedHistoriesCreateConflicts() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        try await store.replicate("doc", ["v": "base"], history: ["1-aaaa"])
        try await store.replicate("doc", ["v": "left"], history: ["3-cccc", "2-bbbb", "1-aaaa"])
        try await store.replicate("doc", ["v": "right"], history: ["2-dddd", "1-aaaa"])
        let metadata = try #require(try await store.metadata("doc"))
        #expect(metadata.tree.hasConflict)
        #expect(metadata.winner == RevID("3-cccc"))
        #expect(metadata.tree.liveLeaves == [RevID("3-cccc")!, RevID("2-dddd")!])
        // The intermediate 2-bbbb came without a body.
        #expect(metadata.tree.node(for: RevID("2-bbbb")!)?.hasBody == false)
        await expectStoreError(.notFound) { try await store.revision("doc", rev: RevID("2-bbbb")!) }
        // The losing leaf's body is readable.
        #expect(try await store.revision("doc", rev: RevID("2-dddd")!).1.body == ["v": "right"])
        // Inserting a known revision again is a no-op without a new sequence.
        let again = try await store.replicate("doc", ["v": "right"], history: ["2-dddd", "1-aaaa"])
        #expect(again.sequence == nil)
        #expect(store.info().updateSequence == 3)
    }

    @Test func winnerMovesWhenWinningBranchIsDeleted() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        try await store.replicate("doc", ["v": "a"], history: ["2-ffff", "1-aaaa"])
        try await store.replicate("doc", ["v": "b"], history: ["2-0000", "1-aaaa"])
        #expect(try await store.revision("doc").1.body == ["v": "a"])
        let tombstone = try await store.put("doc", [:], parent: RevID("2-ffff")!, deleted: true)
        let (metadata, winner) = try await store.revision("doc")
        #expect(winner.revID == RevID("2-0000"))
        #expect(winner.body == ["v": "b"])
        #expect(!metadata.tree.hasConflict)
        #expect(metadata.tree.leaves.contains(tombstone.revID))
        #expect(store.info().docCount == 1)
    }

    @Test func batchReportsPerDocumentErrors() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let results = try await store.save(batch: [
            DocumentUpdate(docID: "a", body: ["n": 1], mode: .edit(parent: nil)),
            DocumentUpdate(docID: "b", body: ["_bad": 1], mode: .edit(parent: nil)),
            DocumentUpdate(docID: "", body: [:], mode: .edit(parent: nil)),
            DocumentUpdate(docID: "a", body: ["n": 2], mode: .edit(parent: nil)),
            DocumentUpdate(docID: "c", body: ["n": 3], mode: .edit(parent: nil)),
        ])
        #expect((try? results[0].get()) != nil)
        #expect(results[1].failureKind == .badRequest)
        #expect(results[2].failureKind == .badRequest)
        #expect(results[3].failureKind == .conflict)
        #expect((try? results[4].get())?.sequence == 2)
        #expect(store.info().docCount == 2)
    }

    @Test func largeBatchKeepsOrderAndPerDocumentResults() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        // Large enough to be prepared on several threads; bad documents spread through it.
        var updates: [DocumentUpdate] = []
        for index in 0..<600 {
            let body: [String: JSON] = index % 97 == 5 ? ["_bad": 1] : ["i": .int(Int64(index))]
            let id = index % 150 == 149 ? "dup" : "d\(index)"
            updates.append(DocumentUpdate(docID: id, body: body, mode: .edit(parent: nil)))
        }
        updates.append(DocumentUpdate(docID: "r", body: ["v": 1], mode: .replicate(history: [RevID("2-bbbb")!, RevID("1-aaaa")!])))
        let results = try await test.store.save(batch: updates)
        #expect(results.count == updates.count)
        var dupSeen = false
        for (index, result) in results.enumerated().dropLast() {
            if index % 97 == 5 {
                #expect(result.failureKind == .badRequest)
            } else if index % 150 == 149 {
                #expect(dupSeen ? result.failureKind == .conflict : (try? result.get()) != nil)
                dupSeen = true
            } else {
                let write = try result.get()
                #expect(write.docID == "d\(index)")
                let expected = RevID.compute(parent: nil, deleted: false, canonicalBody: JSON.object(["i": .int(Int64(index))]).canonicalBytes())
                #expect(write.revID == expected)
            }
        }
        #expect(try results.last!.get().revID == RevID("2-bbbb"))
        let tree = try #require(try await test.store.metadata("r")).tree
        #expect(tree.history(of: RevID("2-bbbb")!) == [RevID("2-bbbb")!, RevID("1-aaaa")!])
        // Sequences are dense and in batch order.
        let sequences = results.compactMap { try? $0.get().sequence }.compactMap { $0 }
        #expect(sequences == Array(1...UInt64(sequences.count)))
    }

    @Test func oversizeDocumentIsRejected() async throws {
        let test = try await TestStore.make(maxDocumentSize: 100)
        defer { test.destroy() }
        await expectStoreError(.tooLarge) {
            try await test.store.put("big", ["text": .string(String(repeating: "x", count: 200))])
        }
        #expect(test.store.info().updateSequence == 0)
    }

    @Test func stemmingKeepsLeavesAndDropsOldBodies() async throws {
        let test = try await TestStore.make(revsLimit: 5)
        defer { test.destroy() }
        let store = test.store
        var parent: RevID?
        for index in 0..<20 {
            parent = try await store.put("doc", ["i": .int(Int64(index))], parent: parent).revID
        }
        let metadata = try #require(try await store.metadata("doc"))
        #expect(metadata.tree.nodes.count == 5)
        #expect(metadata.winner == parent)
        #expect(try await store.revision("doc").1.body == ["i": 19])
    }

    @Test func invalidDocIDs() {
        #expect(DocumentStore.isValidDocID("a"))
        #expect(DocumentStore.isValidDocID("_design/x"))
        #expect(!DocumentStore.isValidDocID(""))
        #expect(!DocumentStore.isValidDocID("_foo"))
        #expect(!DocumentStore.isValidDocID("_design/"))
        #expect(!DocumentStore.isValidDocID(String(repeating: "x", count: 251)))
        #expect(!DocumentStore.isValidDocID("a\u{0}b"))
    }
}

extension Result where Failure == StoreError {
    var failureKind: StoreError.Kind? {
        if case .failure(let error) = self { return error.kind }
        return nil
    }
}

func expectStoreError<T>(
    _ kind: StoreError.Kind, reason: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> T
) async {
    do {
        _ = try await body()
        Issue.record("expected \(kind) error", sourceLocation: sourceLocation)
    } catch let error as StoreError {
        #expect(error.kind == kind, sourceLocation: sourceLocation)
        if let reason { #expect(error.reason == reason, sourceLocation: sourceLocation) }
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}

@Suite struct CancelledWriteTests {
    /// Writes cancelled while others commit never make the store reuse a sequence
    /// (found by the chaos test: a closing replication cancelled an insert).
    @Test func cancelledWritesKeepSequencesUnique() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        await withTaskGroup(of: Void.self) { group in
            for round in 0..<40 {
                let writer = Task {
                    _ = try? await store.save(batch: (0..<20).map {
                        DocumentUpdate(docID: "c\(round)-\($0)", body: ["r": .int(Int64(round))], mode: .edit(parent: nil))
                    })
                }
                group.addTask {
                    if round % 2 == 0 { writer.cancel() }
                    _ = await writer.result
                }
                group.addTask { _ = try? await store.put("k\(round)", ["r": .int(Int64(round))]) }
            }
        }
        // Every write after the storm gets a fresh sequence, above all existing ones.
        let after = try await store.put("after", [:])
        let changes = try await store.changes(since: 0)
        let sequences = changes.map(\.sequence)
        #expect(Set(sequences).count == sequences.count)
        #expect(after.sequence == sequences.max())
        #expect(store.info().updateSequence == after.sequence)
        #expect(store.info().docCount == changes.count)
    }
}
