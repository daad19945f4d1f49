import DocumentModel
import DocumentStore
import Foundation
import Testing
import TestSupport

/// A branch revision as another node would have written it (§2 revision IDs).
func branch(_ body: [String: JSON], parent: RevID, deleted: Bool = false) -> RevID {
    RevID.compute(parent: parent, deleted: deleted, canonicalBody: RevisionBody.digestBody(body))
}

@Suite struct ConflictResolveTests {
    static let task: [String: JSON] = ["type": "task", "name": "Buy milk", "complete": false]
    static let renamed: [String: JSON] = ["type": "task", "name": "Buy oat milk", "complete": false]
    static let completed: [String: JSON] = ["type": "task", "name": "Buy milk", "complete": true]

    /// `doc` with a base and two live branches (renamed / completed), inserted in the given order.
    static func conflicted(_ store: DocumentStore, completedFirst: Bool = false) async throws -> (base: RevID, a: RevID, b: RevID) {
        let base = RevID.compute(parent: nil, deleted: false, canonicalBody: RevisionBody.digestBody(task))
        let a = branch(renamed, parent: base), b = branch(completed, parent: base)
        try await store.replicate("doc", task, history: [base.description])
        let branches = [(a, renamed), (b, completed)]
        for (rev, body) in completedFirst ? branches.reversed() : branches {
            try await store.replicate("doc", body, history: [rev.description, base.description])
        }
        return (base, a, b)
    }

    @Test func winnerTombstonesTheLosersAndWritesNoChild() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let (_, a, b) = try await Self.conflicted(test.store)
        let outcome = try await test.store.resolveConflict(docID: "doc", policies: ConflictPolicies(default: .winner))
        let resolution = try #require(outcome.resolution)
        #expect(resolution.result == nil)
        #expect(resolution.tombstones.count == 1)
        let tree = try #require(try await test.store.metadata("doc")).tree
        #expect(tree.liveLeaves.count == 1)
        #expect(Set([a, b]).contains(tree.winner!))
        // A second pass finds nothing to do.
        #expect(try await test.store.resolveConflict(docID: "doc", policies: ConflictPolicies()) == .noConflict)
    }

    @Test func mergeKeepsBothChangesAndIsTheSameInEitherArrivalOrder() async throws {
        var trees: [RevTree] = []
        var bodies: [[String: JSON]] = []
        for completedFirst in [false, true] {
            let test = try await TestStore.make()
            defer { test.destroy() }
            _ = try await Self.conflicted(test.store, completedFirst: completedFirst)
            let policies = ConflictPolicies(default: .winner, byType: ["task": .merge])
            let outcome = try await test.store.resolveConflict(docID: "doc", policies: policies)
            #expect(outcome.resolution?.policy == .merge)
            let (meta, winner) = try await test.store.revision("doc")
            #expect(winner.body == ["type": "task", "name": "Buy oat milk", "complete": true])
            trees.append(meta.tree)
            bodies.append(winner.body ?? [:])
        }
        #expect(trees[0].leaves == trees[1].leaves)
        #expect(trees[0].winner == trees[1].winner)
        #expect(bodies[0] == bodies[1])
    }

    @Test func policyNoneKeepsTheConflict() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        _ = try await Self.conflicted(test.store)
        #expect(try await test.store.resolveConflict(docID: "doc", policies: ConflictPolicies(default: .none)) == .keep)
        #expect(try #require(try await test.store.metadata("doc")).tree.hasConflict)
    }

    @Test func mergeWithoutTheBaseBodyWaitsAndAcceptsOnlyTheTrueBase() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        // Both branches arrive by replication; the base is only a placeholder in their histories.
        let base = RevID.compute(parent: nil, deleted: false, canonicalBody: RevisionBody.digestBody(Self.task))
        let a = branch(Self.renamed, parent: base), b = branch(Self.completed, parent: base)
        try await store.replicate("doc", Self.renamed, history: [a.description, base.description])
        try await store.replicate("doc", Self.completed, history: [b.description, base.description])
        let policies = ConflictPolicies(default: .merge)
        #expect(try await store.resolveConflict(docID: "doc", policies: policies) == .needsMergeBase(base))
        // A forged base is refused: the body must hash to the revision ID.
        await #expect(throws: StoreError.self) {
            try await store.storeMissingBody(docID: "doc", rev: base, body: ["type": "task", "name": "forged"])
        }
        try await store.storeMissingBody(docID: "doc", rev: base, body: Self.task)
        let outcome = try await store.resolveConflict(docID: "doc", policies: policies)
        #expect(outcome.resolution != nil)
        #expect(try await store.revision("doc").1.body == ["type": "task", "name": "Buy oat milk", "complete": true])
    }

    @Test func monitorResolvesExistingConflictsAtStartAndNewOnesAsTheyArrive() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        _ = try await Self.conflicted(store)
        let monitor = ConflictMonitor(store: store, policies: ConflictPolicies(default: .merge), settle: .milliseconds(1))
        monitor.start()
        #expect(try await eventually { try await store.metadata("doc")?.tree.hasConflict == false })
        // A conflict created later by a replicated branch.
        let r1 = try await store.put("later", ["x": 1, "y": 1])
        let mine = try await store.put("later", ["x": 2, "y": 1], parent: r1.revID)
        let theirs = branch(["x": 1, "y": 2], parent: r1.revID)
        try await store.replicate("later", ["x": 1, "y": 2], history: [theirs.description, r1.revID.description])
        #expect(try await eventually { try await store.metadata("later")?.tree.hasConflict == false })
        #expect(try await store.revision("later").1.body == ["x": 2, "y": 2])
        // The monitor counts a resolution after its commit, which the test may see first.
        #expect(await eventually { monitor.counters.resolved == 2 })
        _ = mine
        await monitor.stop()
    }
}
