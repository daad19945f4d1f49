import DocumentModel
import DocumentStore
import Replication
import Testing
import TestSupport

/// Every branch of a conflicted document reaches the peer, however long ago it
/// was stored (found by the netlab chaos demo: a sibling stored more than one
/// `changes` batch before the document's latest change was never offered).
@Suite struct ConflictBranchTests {
    @Test(arguments: [50, 250, 1000])
    func oldSiblingBranchesReplicate(otherDocuments: Int) async throws {
        let source = try await TestStore.make()
        let target = try await TestStore.make()
        defer { source.destroy(); target.destroy() }
        let base = try await source.store.put("doc", ["v": 0])
        let first = try await source.store.put("doc", ["v": "edited"], parent: base.revID)
        // A losing sibling, stored long before the document's latest change.
        try await source.store.replicate("doc", ["v": "sibling"], history: ["2-00000000", base.revID.description])
        for index in 0..<otherDocuments { try await source.store.put("other\(index)", ["i": .int(Int64(index))]) }
        let winner = try await source.store.put("doc", ["v": "winner"], parent: first.revID)
        let replicator = Replicator(
            store: target.store,
            configuration: ReplicationConfiguration(id: "pull", remote: "ws://peer/db", direction: .pull, batchSize: 200),
            dialer: LoopbackDialer(peer: source.store))
        replicator.start()
        await replicator.waitUntilFinished()
        let leaves = try #require(try await target.store.metadata("doc")).tree.leaves
        #expect(Set(leaves) == [winner.revID, RevID("2-00000000")!])
        #expect(target.store.info().docCount == otherDocuments + 1)
    }
}
