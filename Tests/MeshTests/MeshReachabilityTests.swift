import Foundation
import Glibc
@testable import Mesh
import Testing
import TestSupport

/// A partition of a large mesh: each side must stay linked within itself (the dial
/// rule alone links each node to ring neighbors that the cut may all put on the other
/// side), and the heal must bring back the rule's own links and nothing more.
@Suite(.ownThread) struct MeshReachabilityTests {
    static let after = Duration.seconds(12)

    /// One round of every node's periodic check, played on the pure functions: the
    /// links are the pairs where one side chooses the other (its own dial or its
    /// fallback) and both sides can reach each other.
    struct Simulation {
        let nodes: [String]
        let maxPeers: Int
        var reachable: (String, String) -> Bool
        var unreachable: [String: Set<String>] = [:]
        var unlinkedSince: [String: [String: ContinuousClock.Instant]] = [:]
        var now = ContinuousClock.now

        func chosen(_ node: String) -> Set<String> {
            DialRule.neighbors(of: node, among: Set(nodes), maxPeers: maxPeers, unreachable: unreachable[node] ?? [])
        }

        func links() -> [String: Set<String>] {
            var links: [String: Set<String>] = [:]
            for a in nodes {
                for b in chosen(a) where reachable(a, b) {
                    links[a, default: []].insert(b)
                    links[b, default: []].insert(a)
                }
            }
            return links
        }

        /// Every node probes the peers it has no link with (as `probePeers` does).
        mutating func probe() {
            let links = links()
            for node in nodes {
                let unlinked = nodes.filter { $0 != node && !(links[node]?.contains($0) ?? false) }
                let answers = Dictionary(uniqueKeysWithValues: unlinked.map { ($0, reachable(node, $0)) })
                unreachable[node] = MeshManager.applyProbe(answers, to: unreachable[node] ?? [])
            }
        }

        /// Every node checks once, a timeout's worth after the previous round.
        mutating func round() {
            let links = links()
            for node in nodes {
                let plan = MeshManager.planReachability(
                    ideal: DialRule.neighbors(of: node, among: Set(nodes), maxPeers: maxPeers), chosen: chosen(node),
                    linked: links[node] ?? [], unlinkedSince: unlinkedSince[node] ?? [:],
                    unreachable: unreachable[node] ?? [], now: now, after: MeshReachabilityTests.after)
                unreachable[node] = plan.unreachable
                unlinkedSince[node] = plan.unlinkedSince
            }
            now += MeshReachabilityTests.after
        }
    }

    static func isConnected(_ group: [String], _ links: [String: Set<String>]) -> Bool {
        var seen: Set<String> = [group[0]]
        var frontier = [group[0]]
        while let next = frontier.popLast() {
            for peer in links[next] ?? [] where seen.insert(peer).inserted { frontier.append(peer) }
        }
        return seen.isSuperset(of: group)
    }

    @Test(arguments: [(48, 4, UInt64(1)), (48, 2, 2), (48, 4, 3), (30, 3, 4), (48, 6, 5)])
    func eachSideOfAPartitionLinksUpAndTheHealRestoresTheRuleLinks(size: Int, groups: Int, seed: UInt64) {
        let nodes = DialRuleTests.ids(size, seed: seed)
        let groupOf = Dictionary(uniqueKeysWithValues: nodes.enumerated().map { ($0.element, $0.offset * groups / size) })
        let sides = (0..<groups).map { g in nodes.filter { groupOf[$0] == g } }
        var simulation = Simulation(nodes: nodes, maxPeers: 8) { groupOf[$0] == groupOf[$1] }
        // The rule alone leaves some side in pieces (else this test proves nothing).
        #expect(!sides.allSatisfy { Self.isConnected($0, simulation.links()) })
        var rounds = 0
        while !sides.allSatisfy({ Self.isConnected($0, simulation.links()) }) && rounds < 10 {
            simulation.round()
            rounds += 1
        }
        #expect(sides.allSatisfy { Self.isConnected($0, simulation.links()) }, "sides still in pieces after \(rounds) rounds")
        #expect(rounds <= 4, "\(rounds) rounds (each about \(Self.after)) before every side was linked")
        // Bounded: the rule's neighbors plus as many replacements.
        #expect(nodes.allSatisfy { simulation.chosen($0).count <= 16 })

        // The heal: everything reachable again; once the rule's links are up, the
        // unreachable sets clear and each node keeps exactly the rule's neighbors.
        simulation.reachable = { _, _ in true }
        simulation.round()
        simulation.round()
        for node in nodes {
            #expect(simulation.unreachable[node] == [])
            #expect(simulation.chosen(node) == DialRule.neighbors(of: node, among: Set(nodes), maxPeers: 8))
        }
    }

    @Test(arguments: [(48, 4, UInt64(1)), (48, 2, 2), (30, 3, 4), (48, 6, 5)])
    func oneProbeLinksEverySideOfAPartition(size: Int, groups: Int, seed: UInt64) {
        let nodes = DialRuleTests.ids(size, seed: seed)
        let groupOf = Dictionary(uniqueKeysWithValues: nodes.enumerated().map { ($0.element, $0.offset * groups / size) })
        let sides = (0..<groups).map { g in nodes.filter { groupOf[$0] == g } }
        var simulation = Simulation(nodes: nodes, maxPeers: 8) { groupOf[$0] == groupOf[$1] }
        #expect(!sides.allSatisfy { Self.isConnected($0, simulation.links()) })
        simulation.probe()
        #expect(sides.allSatisfy { Self.isConnected($0, simulation.links()) })
        // Every node keeps at least the rule's number of links on its own side (when
        // the side has that many other nodes).
        let links = simulation.links()
        for node in nodes {
            let side = nodes.filter { groupOf[$0] == groupOf[node] }.count - 1
            #expect((links[node]?.count ?? 0) >= min(side, 8) - 1)
        }
    }

    @Test func theProbePlanStartsOnceANeighborIsUnlinkedAndRepeatsAtItsInterval() {
        let t0 = ContinuousClock.now
        func plan(at: Duration, since: ContinuousClock.Instant?, lastProbe: ContinuousClock.Instant?) -> Bool {
            MeshManager.planReachability(
                ideal: ["a", "b"], chosen: ["a", "b"], linked: ["a"], unlinkedSince: since.map { ["b": $0] } ?? [:],
                unreachable: [], now: t0 + at, after: .seconds(12), lastProbe: lastProbe,
                probeAfter: .seconds(6), probeInterval: .seconds(20)).probe
        }
        #expect(!plan(at: .zero, since: nil, lastProbe: nil))
        #expect(!plan(at: .seconds(5), since: t0, lastProbe: nil))
        #expect(plan(at: .seconds(6), since: t0, lastProbe: nil))
        #expect(!plan(at: .seconds(19), since: t0, lastProbe: t0 + .seconds(6)))
        #expect(plan(at: .seconds(26), since: t0, lastProbe: t0 + .seconds(6)))
        // A whole mesh is never probed.
        #expect(!MeshManager.planReachability(
            ideal: ["a"], chosen: ["a"], linked: ["a"], unlinkedSince: [:], unreachable: [], now: t0 + .seconds(60),
            after: .seconds(12)).probe)
        #expect(MeshManager.applyProbe(["x": true, "y": false], to: ["x", "z"]) == ["y", "z"])
    }

    @Test func theTCPProbeTellsAListeningPortFromAClosedOne() async throws {
        let (listener, port) = try LoopbackListener.open()
        defer { Glibc.close(listener) }
        #expect(await MeshManager.tcpProbe("ws://127.0.0.1:\(port)/db"))
        // A port bound but not listening refuses, and stays ours while the test runs
        // (closing the listener would let a parallel test take the port).
        let closed = try LoopbackListener.boundButNotListening()
        defer { Glibc.close(closed.fd) }
        #expect(!(await MeshManager.tcpProbe("ws://127.0.0.1:\(closed.port)/db")))
        #expect(!(await MeshManager.tcpProbe("not a url")))
    }

    @Test func aWholeMeshNeverMarksAnyoneUnreachable() {
        let nodes = DialRuleTests.ids(20, seed: 11)
        var simulation = Simulation(nodes: nodes, maxPeers: 4) { _, _ in true }
        for _ in 0..<3 { simulation.round() }
        #expect(nodes.allSatisfy { simulation.unreachable[$0] == [] && simulation.unlinkedSince[$0] == [:] })
    }

    @Test func aPeerUnlinkedForTheDelayIsUnreachableAndALinkClearsIt() {
        let t0 = ContinuousClock.now
        let ideal: Set<String> = ["a", "b"]
        var plan = MeshManager.planReachability(
            ideal: ideal, chosen: ideal, linked: ["a"], unlinkedSince: [:], unreachable: [], now: t0, after: .seconds(12))
        #expect(plan.unlinkedSince == ["b": t0] && plan.unreachable.isEmpty)
        plan = MeshManager.planReachability(
            ideal: ideal, chosen: ideal, linked: ["a"], unlinkedSince: plan.unlinkedSince, unreachable: [],
            now: t0 + .seconds(11), after: .seconds(12))
        #expect(plan.unreachable.isEmpty)
        plan = MeshManager.planReachability(
            ideal: ideal, chosen: ideal.union(["c"]), linked: ["a"], unlinkedSince: plan.unlinkedSince, unreachable: [],
            now: t0 + .seconds(12), after: .seconds(12))
        #expect(plan.unreachable == ["b"] && plan.unlinkedSince["c"] == t0 + .seconds(12))
        // The neighbor links again: the mesh is whole, nothing stays unreachable.
        plan = MeshManager.planReachability(
            ideal: ideal, chosen: ideal.union(["c"]), linked: ["a", "b"], unlinkedSince: plan.unlinkedSince,
            unreachable: plan.unreachable, now: t0 + .seconds(13), after: .seconds(12))
        #expect(plan == MeshManager.ReachabilityPlan())
    }
}
