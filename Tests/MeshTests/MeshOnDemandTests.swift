import DocumentModel
import Foundation
import Mesh
import Synchronization
import Testing
import TestSupport

/// Peers seen but not resolved (discovery on demand): they count for the dial rule, the
/// mesh asks for the addresses of those the rule picks, and links once they arrive.
@Suite struct MeshOnDemandTests {
    @Test func listedPeersCountForTheRuleAndTheChosenAreAskedFor() async throws {
        let node = try await TestNode.start { $0.databases[0].maxPeers = 4 }
        defer { Task { await node.stop() } }
        let mesh = try #require(node.node.meshes["db"])
        let asked = Mutex<[Set<String>]>([])
        mesh.onChosenPeersChange { chosen in asked.withLock { $0.append(chosen) } }
        let others = (1...20).map { "peer-\($0)" }
        for id in others { await mesh.peerListed(nodeID: id) }
        let expected = DialRule.neighbors(of: node.node.nodeID, among: Set(others), maxPeers: 4)
        #expect(expected.count == 4)
        #expect(await eventually { asked.withLock { $0.last } == expected })
        // Nothing is dialed without an address.
        #expect(mesh.peers.isEmpty)
        // A chosen peer that leaves is replaced by the rule's next pick.
        let leaving = try #require(expected.sorted().first)
        await mesh.peerLost(nodeID: leaving)
        let next = DialRule.neighbors(of: node.node.nodeID, among: Set(others).subtracting([leaving]), maxPeers: 4)
        #expect(await eventually { asked.withLock { $0.last } == next })
        #expect(!next.contains(leaving))
    }

    @Test func aListedPeerIsLinkedOnceResolved() async throws {
        let a = try await TestNode.start { $0.heartbeat = .milliseconds(500) }
        let b = try await TestNode.start { $0.heartbeat = .milliseconds(500) }
        defer { Task { await a.stop(); await b.stop() } }
        let meshA = try #require(a.node.meshes["db"])
        let meshB = try #require(b.node.meshes["db"])
        let asked = Mutex<Set<String>>([])
        meshA.onChosenPeersChange { chosen in asked.withLock { $0 = chosen } }
        await meshA.peerListed(nodeID: b.node.nodeID)
        await meshB.peerListed(nodeID: a.node.nodeID)
        #expect(await eventually { asked.withLock { $0 } == [b.node.nodeID] })
        // The resolution arrives (as discovery would report it): the pair links and replicates.
        await meshA.peerFound(nodeID: b.node.nodeID, url: "ws://127.0.0.1:\(b.ports.publicPort)/db", source: .mdns)
        await meshB.peerFound(nodeID: a.node.nodeID, url: "ws://127.0.0.1:\(a.ports.publicPort)/db", source: .mdns)
        _ = try await a.request("PUT", "/db/doc", json: ["v": .int(1)])
        #expect(try await eventually { try await b.request("GET", "/db/doc").status == 200 })
    }
}
