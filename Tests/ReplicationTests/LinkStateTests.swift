import BLIP
import DocumentModel
import DocumentStore
import Foundation
import Replication
import Testing
import TestSupport

/// A link's convergence accounting (`LinkState`): what the push side has not had
/// acknowledged is pending from the moment it is committed until the peer answers, the
/// link is not idle meanwhile, and both numbers drain once the peer has stored it all.
@Suite struct LinkStateTests {
    /// A continuous push+pull from a local store to a node, through a relay that can go
    /// silent (the heartbeat then drops the connection: what the relay swallowed is gone).
    static func link(to peer: TestNode, through relay: TCPRelay, store: DocumentStore) -> Replicator {
        let configuration = ReplicationConfiguration(
            id: "link", remote: "ws://127.0.0.1:\(relay.port)/db", direction: .pushAndPull, continuous: true,
            heartbeat: .milliseconds(500), maxBackoff: .milliseconds(500))
        return Replicator(store: store, configuration: configuration, dialer: WebSocketDialer())
    }

    @Test func pendingSendStaysUntilThePeerAcknowledges() async throws {
        let local = try await TestStore.make(inMemory: true)
        defer { local.destroy() }
        let peer = try await TestNode.start()
        defer { Task { await peer.stop() } }
        let relay = try TCPRelay(target: peer.ports.publicPort)
        defer { relay.close() }
        try await local.store.put("first", ["n": 1])
        let replicator = Self.link(to: peer, through: relay, store: local.store)
        replicator.start()
        defer { Task { await replicator.stop() } }
        let progress = replicator.progress
        #expect(await eventually {
            let state = await progress.linkState(reportMaxAge: .seconds(60))
            return state.connected && state.idle && state.pendingSend.isZero
        })
        #expect(try await peer.request("GET", "/db/first").status == 200)

        // The peer hears nothing: every change written now is pending, and the link is busy.
        relay.isSilent = true
        let count = 25
        for index in 0..<count { try await local.store.put("doc\(index)", ["n": .int(Int64(index))]) }
        let behind = await progress.linkState(reportMaxAge: .seconds(60))
        #expect(behind.pendingSend == LinkBacklog(sequences: count, documents: count), "\(behind)")
        #expect(!behind.idle)
        #expect(!behind.inStep)
        #expect(progress.linkStateEstimate(reportMaxAge: .seconds(60)).pendingSend.sequences == count)
        // Still so once the heartbeat gave the link up: nothing was acknowledged.
        #expect(await eventually { await !progress.linkState(reportMaxAge: .seconds(60)).connected })
        let down = await progress.linkState(reportMaxAge: .seconds(60))
        #expect(down.pendingSend == LinkBacklog(sequences: count, documents: count), "\(down)")
        #expect(!down.idle)

        relay.isSilent = false
        #expect(await eventually {
            let state = await progress.linkState(reportMaxAge: .seconds(60))
            return state.idle && state.pendingSend.isZero
        })
        let rows = try await peer.request("GET", "/db/_all_docs").json["total_rows"]?.intValue
        #expect(rows == Int64(count + 1))
    }

    @Test func withoutAPeerReportTheReceiveSideIsNotKnown() async throws {
        let local = try await TestStore.make(inMemory: true)
        defer { local.destroy() }
        let peer = try await TestNode.start()
        defer { Task { await peer.stop() } }
        let relay = try TCPRelay(target: peer.ports.publicPort)
        defer { relay.close() }
        let replicator = Self.link(to: peer, through: relay, store: local.store)
        replicator.start()
        defer { Task { await replicator.stop() } }
        let progress = replicator.progress
        #expect(await eventually { await progress.linkState(reportMaxAge: .seconds(60)).idle })
        // A plain replication peer reports nothing: what is to receive is not known, so
        // the link is idle but never in step.
        let state = await progress.linkState(reportMaxAge: .seconds(60))
        #expect(state.pendingReceive == nil)
        #expect(!state.inStep)
    }

    @Test func aChangeSignalWakesItsWaiters() async throws {
        let signal = ChangeSignal()
        let start = signal.generation
        let waiter = Task { await signal.wait(after: start, timeout: .seconds(3600)) }
        signal.notify()
        await waiter.value
        #expect(signal.generation != start)
        // A generation already moved on returns at once; a timeout ends the wait too.
        await signal.wait(after: start, timeout: .seconds(3600))
        await signal.wait(after: signal.generation, timeout: .milliseconds(10))
    }
}
