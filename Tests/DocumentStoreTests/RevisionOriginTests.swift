import DocumentModel
import DocumentStore
import Foundation
import GRDB
import Testing
import TestSupport

/// Where revisions came from (`RevisionOrigin`): recorded with each change, read back per
/// revision of a tree, never part of a revision ID.
@Suite struct RevisionOriginTests {
    @Test func eachRevisionKeepsTheOriginOfTheChangeThatBroughtIt() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        // The base written here, the two branches received from two peers.
        let base = try await store.put("doc", ConflictResolveTests.task).revID
        let a = branch(ConflictResolveTests.renamed, parent: base)
        let b = branch(ConflictResolveTests.completed, parent: base)
        _ = try await store.save(
            DocumentUpdate(docID: "doc", body: ConflictResolveTests.renamed, mode: .replicate(history: [a, base])),
            origin: .peer(node: "node-b"))
        _ = try await store.save(
            DocumentUpdate(docID: "doc", body: ConflictResolveTests.completed, mode: .replicate(history: [b, base])),
            origin: .peer(node: "node-c", detail: "ws://c:4984/db/_blipsync"))
        let policies = ConflictPolicies(default: .winner, byType: ["task": .merge])
        let outcome = try await store.resolveConflict(docID: "doc", policies: policies, resolver: "node-a")
        let resolution = try #require(outcome.resolution)

        let tree = try #require(try await store.metadata("doc")).tree
        let origins = try await store.origins(of: tree)
        #expect(origins[base] == .local)
        #expect(origins[a] == .peer(node: "node-b"))
        #expect(origins[b] == .peer(node: "node-c", detail: "ws://c:4984/db/_blipsync"))
        #expect(resolution.revisions.count == 2)
        for revision in resolution.revisions {
            #expect(origins[revision.revID] == .resolver(node: "node-a", detail: "merge"), "\(revision.revID)")
        }
        #expect(origins.count == tree.nodes.count)
    }

    @Test func theResolverWritesTheSameRevisionsOnEveryNodeWhateverItsID() async throws {
        var results: [[RevID]] = []
        for node in ["node-a", "node-b"] {
            let test = try await TestStore.make()
            defer { test.destroy() }
            _ = try await ConflictResolveTests.conflicted(test.store)
            let outcome = try await test.store.resolveConflict(
                docID: "doc", policies: ConflictPolicies(default: .merge), resolver: node)
            let revisions = try #require(outcome.resolution).revisions.map(\.revID)
            let tree = try #require(try await test.store.metadata("doc")).tree
            let origins = try await test.store.origins(of: tree)
            #expect(revisions.allSatisfy { origins[$0]?.node == node && origins[$0]?.kind == .resolver })
            results.append(revisions)
        }
        #expect(results[0] == results[1])
    }

    @Test func consecutiveChangesFromOneOriginShareARow() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        for index in 0..<5 { try await store.put("local-\(index)", ["n": .int(Int64(index))]) }
        _ = try await store.save(batch: (0..<3).map { index in
            DocumentUpdate(docID: "peer-\(index)", body: ["n": .int(Int64(index))], mode: .edit(parent: nil))
        }, origin: .peer(node: "node-b"))
        try await store.put("local-5", [:])
        let rows = try await store.auxiliaryRead { db in
            try Row.fetchAll(db, sql: "SELECT first_seq, last_seq, kind, node FROM rev_origins ORDER BY first_seq")
                .map { "\($0[0] as Int64)-\($0[1] as Int64) \($0[2] as String) \(($0[3] as String?) ?? "-")" }
        }
        #expect(rows == ["1-5 local -", "6-8 peer node-b", "9-9 local -"])
        let tree = try #require(try await store.metadata("peer-1")).tree
        #expect(try await store.origins(of: tree)[tree.winner!] == .peer(node: "node-b"))
        // A revision that arrives again (already stored) keeps its first origin.
        let existing = try #require(try await store.metadata("local-2"))
        _ = try await store.save(
            DocumentUpdate(docID: "local-2", body: ["n": 2], mode: .replicate(history: [existing.winner])),
            origin: .peer(node: "node-c"))
        #expect(try await store.origins(of: existing.tree)[existing.winner] == .local)
    }
}
