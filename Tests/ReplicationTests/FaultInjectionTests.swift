import BLIP
import DocumentModel
import DocumentStore
import Foundation
import Replication
import Testing
import TestSupport

/// Replication through a transport that drops connections mid-batch and delays
/// frames: it completes, and nothing is lost or duplicated.
@Suite struct FaultInjectionTests {
    @Test func droppedConnectionsStillConverge() async throws {
        let source = try await TestStore.make()
        let target = try await TestStore.make()
        defer { source.destroy(); target.destroy() }
        var expected: [String: RevID] = [:]
        for index in 0..<300 {
            let body: [String: JSON] = ["n": .int(Int64(index)), "pad": .string(String(repeating: "x", count: 500))]
            expected["d\(index)"] = try await source.store.put("d\(index)", body).revID
        }
        // The first three connections break after a few hundred frames; later ones are clean but slow.
        let dialer = LoopbackDialer(peer: source.store) { attempt in
            attempt <= 3 ? FaultyTransport.Faults(dropAfterReceivedFrames: 40 * attempt) : FaultyTransport.Faults(receiveDelay: .milliseconds(1))
        }
        let configuration = ReplicationConfiguration(
            id: "faulty", remote: "ws://peer/db", direction: .pull, continuous: true, batchSize: 50,
            maxBackoff: .milliseconds(100))
        let replicator = Replicator(store: target.store, configuration: configuration, dialer: dialer)
        replicator.start()
        let converged = await eventually(timeout: .seconds(60)) {
            (try? await target.store.allDocs(AllDocsQuery()).count) == 300
        }
        await replicator.stop()
        #expect(converged)
        #expect(dialer.dialCount >= 4)
        for (id, rev) in expected {
            let metadata = try #require(try await target.store.metadata(id))
            // Exactly the source's single revision: nothing duplicated, no spurious branch.
            #expect(metadata.tree.leaves == [rev])
            #expect(metadata.tree.nodes.count == 1)
        }
    }

    @Test func pushAndPullOverLoopbackWithConflicts() async throws {
        let left = try await TestStore.make()
        let right = try await TestStore.make()
        defer { left.destroy(); right.destroy() }
        let base = try await left.store.put("doc", ["v": 0])
        try await right.store.replicate("doc", ["v": 0], history: [base.revID.description])
        try await left.store.put("doc", ["v": "left"], parent: base.revID)
        try await right.store.put("doc", ["v": "right"], parent: base.revID)
        try await right.store.put("onlyRight", ["x": 1])
        let dialer = LoopbackDialer(peer: right.store)
        let replicator = Replicator(
            store: left.store,
            configuration: ReplicationConfiguration(id: "both", remote: "ws://peer/db", direction: .pushAndPull),
            dialer: dialer)
        replicator.start()
        await replicator.waitUntilFinished()
        #expect(replicator.status.state == .stopped, "\(replicator.status)")
        let l = try #require(try await left.store.metadata("doc"))
        let r = try #require(try await right.store.metadata("doc"))
        #expect(Set(l.tree.leaves) == Set(r.tree.leaves))
        #expect(l.tree.leaves.count == 2)
        #expect(l.winner == r.winner)
        #expect(try await left.store.metadata("onlyRight") != nil)
    }

    /// The passive side cannot read what the peer may see (its access read fails): the
    /// feed ends with an error, so a one-shot pull retries and gets everything instead
    /// of ending `stopped` with nothing, as if the feed had been empty.
    @Test func aFailedAccessReadFailsThePullInsteadOfEndingItEmpty() async throws {
        let source = try await TestStore.make()
        let target = try await TestStore.make()
        defer { source.destroy(); target.destroy() }
        for index in 0..<40 { try await source.store.put("d\(index)", ["n": .int(Int64(index))]) }
        struct AccessUnreadable: Error {}
        let dialer = LoopbackDialer(peer: source.store) { _ in nil } access: { attempt in
            PeerAccess { if attempt == 1 { throw AccessUnreadable() } else { return ["*": 0] } }
        }
        let configuration = ReplicationConfiguration(
            id: "unreadable", remote: "ws://peer/db", direction: .pull, maxBackoff: .milliseconds(100))
        let replicator = Replicator(store: target.store, configuration: configuration, dialer: dialer)
        replicator.start()
        await replicator.waitUntilFinished()
        #expect(replicator.status.state == .stopped, "\(replicator.status)")
        #expect(dialer.dialCount == 2)
        #expect(replicator.status.docsPulled == 40)
        #expect(try await target.store.allDocs(AllDocsQuery()).count == 40)
    }

    /// A one-shot pull whose connection drops while it waits to catch up does not wait
    /// forever: it reconnects and finishes.
    @Test func aOneShotPullThatLosesItsConnectionFinishesOnTheNextOne() async throws {
        let source = try await TestStore.make()
        let target = try await TestStore.make()
        defer { source.destroy(); target.destroy() }
        for index in 0..<200 {
            try await source.store.put("d\(index)", ["pad": .string(String(repeating: "y", count: 400))])
        }
        let dialer = LoopbackDialer(peer: source.store) { attempt in
            attempt == 1 ? FaultyTransport.Faults(dropAfterReceivedFrames: 30) : nil
        }
        let configuration = ReplicationConfiguration(
            id: "dropped", remote: "ws://peer/db", direction: .pull, batchSize: 50, maxBackoff: .milliseconds(100))
        let replicator = Replicator(store: target.store, configuration: configuration, dialer: dialer)
        replicator.start()
        let finished = await eventually(timeout: .seconds(30)) { replicator.status.state == .stopped }
        await replicator.stop()
        #expect(finished, "\(replicator.status)")
        #expect(dialer.dialCount == 2)
        #expect(try await target.store.allDocs(AllDocsQuery()).count == 200)
    }
}
