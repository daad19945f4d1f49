import DocumentModel
import Foundation
@testable import Mesh
import Testing
import TestSupport

/// Static peers count for the dial rule once their node IDs are known: a node that
/// lists more static peers than `max_peers` keeps links with the rule's picks only,
/// and writes still reach every node (the ring keeps the graph connected).
@Suite struct MeshStaticPeersBoundTests {
    @Test func planPrunesUnchosenAndRestoresChosen() {
        let ids = ["ws://b/db": "B", "ws://c/db": "C", "ws://d/db": "D"]
        let first = MeshManager.planStaticDials(staticIDs: ids, pruned: [:], chosen: ["B"])
        #expect(first == .init(prune: ["ws://c/db", "ws://d/db"], restore: []))
        // Already pruned ones are not pruned twice; one the rule picks now comes back.
        let second = MeshManager.planStaticDials(staticIDs: ids, pruned: ["ws://c/db": "C", "ws://d/db": "D"], chosen: ["B", "D"])
        #expect(second == .init(prune: [], restore: ["ws://d/db"]))
        // Peers whose ID is not known are not in `staticIDs`: never pruned.
        #expect(MeshManager.planStaticDials(staticIDs: [:], pruned: [:], chosen: []) == .init())
    }

    @Test func sixNodesListingEachOtherKeepTheRulesRing() async throws {
        let nodes = try await Self.nodesListingEachOther(6)
        defer { Task { for node in nodes { await node.stop() } } }
        let ids = nodes.map(\.node.nodeID)
        /// Each node's linked peers are exactly the rule's ring neighbors (2 of 5).
        func linkedPeers(_ node: TestNode) -> Set<String> {
            Set(node.node.meshes["db"]!.peers.filter { $0.connectedSince != nil }.compactMap(\.nodeID))
        }
        func expected(_ index: Int) -> Set<String> {
            DialRule.neighbors(of: ids[index], among: Set(ids), maxPeers: 2)
        }
        let ring = await eventually(timeout: .seconds(30)) {
            nodes.indices.allSatisfy { linkedPeers(nodes[$0]) == expected($0) }
        }
        #expect(ring, "\(nodes.indices.map { (linkedPeers(nodes[$0]).sorted(), expected($0).sorted()) })")
        #expect(nodes.indices.allSatisfy { expected($0).count == 2 })

        _ = try await nodes[0].request("PUT", "/db/everywhere", json: ["x": 1])
        let reached = try await eventually(timeout: .seconds(30)) {
            try await nodes.asyncMap { try await $0.request("GET", "/db/everywhere").status }.allSatisfy { $0 == 200 }
        }
        #expect(reached)
        // The pruned peers are not dialed again while the rule keeps its picks.
        try await Task.sleep(for: .seconds(1))
        #expect(nodes.indices.allSatisfy { linkedPeers(nodes[$0]) == expected($0) })
    }

    /// A stopped node leaves its ring neighbors short of links: they take it as
    /// unreachable and link to the rule's picks among the others, static peers as
    /// much as discovered ones, so the survivors stay one mesh.
    @Test func aStoppedStaticNeighborIsReplaced() async throws {
        let nodes = try await Self.nodesListingEachOther(5)
        defer { Task { for node in nodes { await node.stop() } } }
        let ids = nodes.map(\.node.nodeID)
        func linkedPeers(_ node: TestNode) -> Set<String> {
            Set(node.node.meshes["db"]!.peers.filter { $0.connectedSince != nil }.compactMap(\.nodeID))
        }
        let ideal = DialRule.neighbors(of: ids[0], among: Set(ids), maxPeers: 2)
        #expect(await eventually(timeout: .seconds(30)) { linkedPeers(nodes[0]) == ideal })
        let gone = try #require(ideal.sorted().first)
        let goneIndex = try #require(ids.firstIndex(of: gone))
        await nodes[goneIndex].stop()
        let survivors = Set(ids).subtracting([gone])
        let replacement = DialRule.neighbors(of: ids[0], among: survivors, maxPeers: 2)
        let relinked = await eventually(timeout: .seconds(40)) { replacement.isSubset(of: linkedPeers(nodes[0])) }
        #expect(relinked, "linked \(linkedPeers(nodes[0]).sorted()), rule among survivors \(replacement.sorted())")
        _ = try await nodes[0].request("PUT", "/db/after", json: ["x": 1])
        let alive = nodes.indices.filter { $0 != goneIndex }.map { nodes[$0] }
        let reached = try await eventually(timeout: .seconds(30)) {
            try await alive.asyncMap { try await $0.request("GET", "/db/after").status }.allSatisfy { $0 == 200 }
        }
        #expect(reached)
    }

    /// `count` nodes with `max_peers` 2, each listing all the others as static peers.
    static func nodesListingEachOther(_ count: Int) async throws -> [TestNode] {
        var nodes: [TestNode] = []
        for _ in 0..<count {
            nodes.append(try await TestNode.start { configuration in
                configuration.heartbeat = .milliseconds(500)
                configuration.databases[0].maxPeers = 2
            })
        }
        for node in nodes {
            let mesh = try #require(node.node.meshes["db"])
            for other in nodes where other !== node {
                await mesh.addStaticPeer("ws://127.0.0.1:\(other.ports.publicPort)/db")
            }
        }
        return nodes
    }
}
