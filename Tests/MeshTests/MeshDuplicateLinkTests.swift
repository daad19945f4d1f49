import DocumentModel
import Foundation
import Mesh
import Testing
import TestSupport

/// Two nodes that list each other as static peers both dial at first (a race);
/// the dial rule keeps exactly one link, and replication goes on over it.
@Suite struct MeshDuplicateLinkTests {
    @Test func mutualStaticPeersKeepOneLink() async throws {
        let a = try await TestNode.start { $0.heartbeat = .milliseconds(500) }
        let b = try await TestNode.start { $0.heartbeat = .milliseconds(500) }
        let nodes = [a, b]
        defer { Task { for node in nodes { await node.stop() } } }
        let meshA = try #require(a.node.meshes["db"])
        let meshB = try #require(b.node.meshes["db"])
        async let addB: Void = meshA.addStaticPeer("ws://127.0.0.1:\(b.ports.publicPort)/db")
        async let addA: Void = meshB.addStaticPeer("ws://127.0.0.1:\(a.ports.publicPort)/db")
        _ = await (addA, addB)
        func links() -> (dialing: Int, accepted: Int) {
            let all = meshA.peers + meshB.peers
            return (all.filter { $0.dialing && $0.connectedSince != nil }.count, all.filter { !$0.dialing }.count)
        }
        // The rule's dialer for the pair, and the node that only accepts.
        let (dialer, other) = DialRule.shouldDial(local: a.node.nodeID, remote: b.node.nodeID) ? (a, b) : (b, a)
        let dialerMesh = dialer === a ? meshA : meshB
        /// The steady state: one link, opened by the rule's dialer. (While the dialer's own
        /// link is down, e.g. one dial attempt timed out on a loaded machine, it accepts the
        /// other side's link for a while: a transient state this test must not mistake for
        /// the end.)
        func settled() -> Bool {
            let (dialing, accepted) = links()
            return dialing == 1 && accepted == 1 && dialerMesh.peers.contains { $0.dialing && $0.connectedSince != nil }
        }
        let single = await eventually(timeout: .seconds(30)) { settled() }
        #expect(single, "dialer \(dialer.node.nodeID): \(meshA.peers) \(meshB.peers)")
        #expect(DialRule.shouldDial(local: dialer.node.nodeID, remote: other.node.nodeID))
        _ = try await a.request("PUT", "/db/fromA", json: ["x": 1])
        _ = try await b.request("PUT", "/db/fromB", json: ["x": 2])
        #expect(try await eventually {
            let (ra, rb) = (try await a.request("GET", "/db/fromB").status, try await b.request("GET", "/db/fromA").status)
            return ra == 200 && rb == 200
        })
        // Still one link, the dialer's, after the traffic.
        #expect(await eventually(timeout: .seconds(10)) { settled() })
    }
}
