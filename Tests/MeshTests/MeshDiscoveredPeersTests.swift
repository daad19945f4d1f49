import DocumentModel
import Foundation
import Mesh
import Testing
import TestSupport

/// Peers reported by discovery: of each pair exactly one side dials (the dial
/// rule), the mesh converges, and a peer that says goodbye is dropped.
@Suite struct MeshDiscoveredPeersTests {
    @Test func exactlyOneConnectionPerPairAndConvergence() async throws {
        var started: [TestNode] = []
        for _ in 0..<4 {
            started.append(try await TestNode.start { $0.heartbeat = .milliseconds(500) })
        }
        let nodes = started
        defer { Task { for node in nodes { await node.stop() } } }
        // Simulate discovery: every node learns every other node.
        for node in nodes {
            let mesh = try #require(node.node.meshes["db"])
            for other in nodes where other !== node {
                await mesh.peerFound(
                    nodeID: other.node.nodeID, url: "ws://127.0.0.1:\(other.ports.publicPort)/db", source: .mdns)
            }
        }
        for (index, node) in nodes.enumerated() {
            _ = try await node.request("PUT", "/db/from\(index)", json: ["i": .int(Int64(index))])
        }
        let converged = try await eventually {
            var counts: [JSON?] = []
            for node in nodes { counts.append(try await node.request("GET", "/db/_all_docs").json["total_rows"]) }
            return counts.allSatisfy { $0 == 4 }
        }
        #expect(converged)
        // Each of the 6 pairs has exactly one dialer.
        var dialed = 0
        for node in nodes {
            // (A fallback dial, should a rule link take over 5 s on a loaded machine, is not the rule's.)
            let peers = node.node.meshes["db"]!.peers.filter { $0.dialing && !$0.fallback }
            dialed += peers.count
            for peer in peers {
                let id = try #require(peer.nodeID)
                #expect(DialRule.shouldDial(local: node.node.nodeID, remote: id))
            }
        }
        #expect(dialed == 6)
        // A goodbye removes the peer: nobody dials it any more.
        let leaving = nodes[0].node.nodeID
        for node in nodes.dropFirst() { await node.node.meshes["db"]!.peerLost(nodeID: leaving) }
        for node in nodes.dropFirst() {
            #expect(!node.node.meshes["db"]!.peers.contains { $0.dialing && $0.nodeID == leaving })
        }
    }
}
