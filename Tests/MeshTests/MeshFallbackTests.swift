import DocumentModel
import Foundation
@testable import Mesh
import Testing
import TestSupport

/// Fallback dials: a peer that the rule makes the dialer but that never linked to us
/// (it did not discover us) is dialed by us after a delay, and our dial stands down
/// once the peer's own link is up.
@Suite struct MeshFallbackTests {
    /// Two IDs where `waiter` is not the rule's dialer of the pair.
    static func pair() -> (waiter: String, dialer: String) {
        var index = 0
        while true {
            let (a, b) = ("node-a\(index)", "node-b\(index)")
            if DialRule.shouldDial(local: b, remote: a) { return (a, b) }
            index += 1
        }
    }

    @Test func planWaitsThenStartsAndStopsWhenThePeerLinks() {
        let (local, peer) = Self.pair()
        let t0 = ContinuousClock.now
        let delay = Duration.seconds(5)
        let known: [String: (url: String, source: MeshPeer.Source)] = [peer: ("ws://p/db", .mdns)]
        func plan(linked: Set<String> = [], fallbacks: Set<String> = [], waiting: [String: ContinuousClock.Instant] = [:],
                  at: Duration, known: [String: (url: String, source: MeshPeer.Source)] = known) -> MeshManager.FallbackPlan {
            MeshManager.planFallbacks(
                local: local, maxPeers: 8, known: known, linkedFrom: linked, fallbacks: fallbacks,
                waitingSince: waiting, now: t0 + at, delay: delay)
        }
        // First seen: the clock starts, nothing is dialed.
        let first = plan(at: .zero)
        #expect(first.start.isEmpty && first.stop.isEmpty)
        #expect(first.waitingSince == [peer: t0])
        // Still unlinked before the delay, then dialed at it.
        #expect(plan(waiting: first.waitingSince, at: .seconds(4)).start.isEmpty)
        #expect(plan(waiting: first.waitingSince, at: .seconds(5)).start == [peer: "ws://p/db"])
        // Already dialing: not started twice.
        #expect(plan(fallbacks: [peer], waiting: first.waitingSince, at: .seconds(9)).start.isEmpty)
        // The peer's own link is up: the fallback stops and the clock is cleared.
        let linked = plan(linked: [peer], fallbacks: [peer], waiting: first.waitingSince, at: .seconds(10))
        #expect(linked.stop == [peer] && linked.start.isEmpty && linked.waitingSince.isEmpty)
        // A peer that is gone keeps no fallback.
        #expect(plan(fallbacks: [peer], at: .seconds(11), known: [:]).stop == [peer])
        // Peers this node dials itself, and static peers, never get a fallback.
        let ours = (0...).lazy.map { "node-o\($0)" }.first { DialRule.shouldDial(local: local, remote: $0) }!
        let mixed = plan(waiting: [peer: t0, ours: t0], at: .seconds(60),
                         known: [ours: ("ws://o/db", .mdns), peer: ("ws://p/db", .static)])
        #expect(mixed.start.isEmpty && mixed.waitingSince.isEmpty)
    }

    @Test func aNodeWithNoLinkAtAllFallsBackAfterASecond() {
        let normal = Duration.seconds(6)
        #expect(MeshManager.fallbackDelay(isolated: false, normal: normal) == normal)
        #expect(MeshManager.fallbackDelay(isolated: true, normal: normal) == .seconds(1))
        // Never longer than the configured delay.
        #expect(MeshManager.fallbackDelay(isolated: true, normal: .milliseconds(300)) == .milliseconds(300))
    }

    @Test func aPeerThatNeverDiscoveredUsIsLinkedByOurFallbackDial() async throws {
        var nodes: [TestNode] = []
        for _ in 0..<2 { nodes.append(try await TestNode.start { $0.heartbeat = .milliseconds(500) }) }
        let started = nodes
        defer { Task { for node in started { await node.stop() } } }
        // Only the side that is not the rule's dialer discovers the other.
        let (waiter, dialer) = DialRule.shouldDial(local: nodes[0].node.nodeID, remote: nodes[1].node.nodeID)
            ? (nodes[1], nodes[0]) : (nodes[0], nodes[1])
        let mesh = try #require(waiter.node.meshes["db"])
        await mesh.peerFound(nodeID: dialer.node.nodeID, url: "ws://127.0.0.1:\(dialer.ports.publicPort)/db", source: .mdns)
        _ = try await dialer.request("PUT", "/db/from-dialer", json: ["x": 1])
        _ = try await waiter.request("PUT", "/db/from-waiter", json: ["x": 2])
        let converged = try await eventually(timeout: .seconds(30)) {
            let a = try await waiter.request("GET", "/db/_all_docs").json["total_rows"]
            let b = try await dialer.request("GET", "/db/_all_docs").json["total_rows"]
            return a == 2 && b == 2
        }
        #expect(converged)
        // Our fallback link is what carried them (under a loaded suite a 500 ms heartbeat can
        // drop it as silent and redial it, so its state is read until it is up).
        let fallbackUp = await eventually(timeout: .seconds(30)) {
            mesh.peers.contains { $0.dialing && $0.fallback && $0.nodeID == dialer.node.nodeID && $0.connectedSince != nil }
        }
        #expect(fallbackUp, "\(mesh.peers)")

        // The dialer discovers the waiter after all: its own link comes up, ours stands down.
        let dialerMesh = try #require(dialer.node.meshes["db"])
        await dialerMesh.peerFound(nodeID: waiter.node.nodeID, url: "ws://127.0.0.1:\(waiter.ports.publicPort)/db", source: .mdns)
        let oneLink = await eventually(timeout: .seconds(30)) {
            !mesh.peers.contains { $0.dialing } && dialerMesh.peers.contains { $0.dialing && $0.connectedSince != nil }
                && mesh.totals.connected == 1
        }
        #expect(oneLink, "\(mesh.peers) / \(dialerMesh.peers)")
    }
}
