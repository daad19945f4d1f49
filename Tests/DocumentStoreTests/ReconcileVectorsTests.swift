@testable import DocumentStore
import DocumentModel
import Foundation
import Testing
import TestSupport

/// A winner's vector learned from a peer's `changes` row (docs/architecture.md §10.9,
/// "Convergence"): stores that made the same edit each reconcile with what the others
/// offer, move the document to a new sequence when their vector grew (so it travels
/// on), and end with one vector whatever the order.
@Suite struct ReconcileVectorsTests {
    /// Three stores make the identical edit: one revision ID, three versions.
    static func identicalEdits() async throws -> (stores: [TestStore], rev: RevID) {
        let stores = try (0..<3).map { _ in try TestStore() }
        var revs: Set<RevID> = []
        for test in stores { revs.insert(try await test.store.put("doc", ["same": true]).revID) }
        #expect(revs.count == 1)
        return (stores, revs.first!)
    }

    @Test func aGrownWinnerVectorMovesToANewSequenceAndTheOtherSideCatchesUp() async throws {
        let (stores, rev) = try await Self.identicalEdits()
        defer { stores.forEach { $0.destroy() } }
        let (a, b) = (stores[0].store, stores[1].store)
        let vA = try #require(try await a.versionVector("doc"))
        let vB = try #require(try await b.versionVector("doc"))
        #expect(vA != vB)
        let before = a.committedSequence

        // A is offered B's vector: A takes both, and B lacks A's part.
        #expect(try await a.reconcileVectors([("doc", rev, vB)]) == [true])
        let joined = try VersionVector.reconciling([vA, vB])
        #expect(try await a.versionVector("doc") == joined)
        #expect(a.committedSequence == before + 1)
        #expect(try await a.changes(since: before).map(\.docID) == ["doc"])

        // B is offered A's result: B now holds the same, and A lacks nothing.
        let bBefore = b.committedSequence
        #expect(try await b.reconcileVectors([("doc", rev, joined)]) == [false])
        #expect(try await b.versionVector("doc") == joined)
        #expect(b.committedSequence == bBefore + 1)

        // Offered again: nothing changes, no new sequence (the exchange ends).
        #expect(try await a.reconcileVectors([("doc", rev, joined)]) == [false])
        #expect(a.committedSequence == before + 1)
        // A revision that is not the winner (or unknown) is left alone.
        let other = RevID.compute(parent: nil, deleted: false, canonicalBody: RevisionBody.digestBody(["other": true]))
        #expect(try await a.reconcileVectors([("doc", other, vB), ("nothing", rev, vB)]) == [false, false])
        #expect(a.committedSequence == before + 1)
    }

    @Test func theOrderOfTheOffersDoesNotChangeTheResult() async throws {
        let (stores, rev) = try await Self.identicalEdits()
        defer { stores.forEach { $0.destroy() } }
        let vectors = try await stores.asyncMap { try #require(try await $0.store.versionVector("doc")) }
        // A copy of A's state reconciled B then C, another C then B.
        let (first, second) = (try await TestStore.make(), try await TestStore.make())
        defer { [first, second].forEach { $0.destroy() } }
        for copy in [first, second] {
            _ = try await copy.store.save(DocumentUpdate(
                docID: "doc", body: ["same": true], mode: .replicate(history: [rev]), version: vectors[0]))
        }
        _ = try await first.store.reconcileVectors([("doc", rev, vectors[1])])
        _ = try await first.store.reconcileVectors([("doc", rev, vectors[2])])
        _ = try await second.store.reconcileVectors([("doc", rev, vectors[2]), ("doc", rev, vectors[1])])
        let expected = try VersionVector.reconciling(vectors)
        #expect(try await first.store.versionVector("doc") == expected)
        #expect(try await second.store.versionVector("doc") == expected)
    }

    @Test func offersAreComparedWithTheStoredWinnerText() async throws {
        let (stores, rev) = try await Self.identicalEdits()
        defer { stores.forEach { $0.destroy() } }
        let (a, b) = (stores[0].store, stores[1].store)
        _ = try await a.put("other", ["n": 1])
        let ownText = try #require(try await a.versionVector("doc")).text(style: .syncGateway)
        let bText = try #require(try await b.versionVector("doc")).text(style: .syncGateway)
        let offered: [(docID: String, rev: RevID)] = [
            ("doc", rev), ("doc", rev), ("doc", rev), ("doc", rev), ("missing", rev),
        ]
        let (missing, differing) = try await a.missingRevisions(
            offered, vectors: [.stored(ownText), .stored(bText), .unknown, .stored(nil), .stored(bText)])
        #expect(missing.map { $0 == nil } == [true, true, true, true, false])
        // The same text: nothing to do; another, or the legacy version alone: reconcile;
        // no vector, or a document we lack: not compared.
        #expect(differing == [1, 3])
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
