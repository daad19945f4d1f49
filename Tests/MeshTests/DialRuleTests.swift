import Foundation
import Mesh
import Testing
import TestSupport

@Suite struct DialRuleTests {
    static func ids(_ count: Int, seed: UInt64) -> [String] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in generator.hexDigest(32) }
    }

    @Test func exactlyOneSideDialsAndItIsFair() {
        let nodes = Self.ids(60, seed: 7)
        var dials = [String: Int]()
        for a in nodes {
            for b in nodes where a != b {
                #expect(DialRule.shouldDial(local: a, remote: b) != DialRule.shouldDial(local: b, remote: a))
                if DialRule.shouldDial(local: a, remote: b) { dials[a, default: 0] += 1 }
            }
        }
        #expect(!DialRule.shouldDial(local: "x", remote: "x"))
        // Each node dials about half of its 59 peers.
        let counts = nodes.map { dials[$0, default: 0] }
        #expect(counts.reduce(0, +) == 60 * 59 / 2)
        #expect(counts.allSatisfy { (12...47).contains($0) }, "\(counts)")
    }

    @Test(arguments: [2, 3, 8])
    func neighborsAreSymmetricBoundedAndConnected(maxPeers: Int) {
        for (size, seed) in [(3, 5), (5, 1), (9, 2), (20, 3), (50, 4)] {
            let nodes = Self.ids(size, seed: UInt64(seed))
            let all = Set(nodes)
            var graph: [String: Set<String>] = [:]
            for node in nodes { graph[node] = DialRule.neighbors(of: node, among: all, maxPeers: maxPeers) }
            for (node, peers) in graph {
                #expect(!peers.contains(node))
                #expect(peers.count <= max(maxPeers, 2), "\(peers.count) peers with max \(maxPeers)")
                for peer in peers { #expect(graph[peer]?.contains(node) == true, "not symmetric") }
            }
            if size <= maxPeers + 1 {
                #expect(graph.values.allSatisfy { $0.count == size - 1 }, "small groups are fully connected")
            }
            // Connected: a walk from any node reaches all.
            var seen: Set<String> = [nodes[0]]
            var frontier = [nodes[0]]
            while let next = frontier.popLast() {
                for peer in graph[next] ?? [] where seen.insert(peer).inserted { frontier.append(peer) }
            }
            #expect(seen == all, "graph of \(size) nodes with max \(maxPeers) is not connected")
        }
    }

    @Test func neighborSelectionDoesNotDependOnOrderOrViewpoint() {
        let nodes = Self.ids(30, seed: 9)
        let forward = DialRule.neighbors(of: nodes[3], among: Set(nodes), maxPeers: 8)
        let shuffled = DialRule.neighbors(of: nodes[3], among: Set(nodes.reversed()), maxPeers: 8)
        #expect(forward == shuffled)
    }
}
