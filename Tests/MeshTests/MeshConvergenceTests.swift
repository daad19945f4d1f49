import DocumentModel
import Foundation
import ShoalNode
import Testing
import TestSupport

/// Each node says, per mesh peer, what it has not sent and not received yet and whether
/// the link is in step (`GET /{db}/_peers`, `GET /_mesh`, the metrics): a mesh that
/// converged says so on every node, and a node never says it is in step with a peer
/// while changes it wrote have not reached that peer.
@Suite struct MeshConvergenceTests {
    static func start(peers: [String] = []) async throws -> TestNode {
        try await TestNode.start { configuration in
            configuration.heartbeat = .milliseconds(500)
            configuration.peers = peers
        }
    }

    static func url(_ port: Int) -> String { "ws://127.0.0.1:\(port)/db" }

    static func peers(_ node: TestNode) async throws -> JSON {
        try await node.request("GET", "/db/_peers", admin: true).json
    }

    /// The node's `_peers` says it is in step with `count` peers, with nothing pending.
    static func inStep(_ node: TestNode, peers count: Int) async throws -> Bool {
        let answer = try await peers(node)
        let links = answer["peers"]?.arrayValue ?? []
        guard answer["in_step"] == true, Set(links.compactMap { $0["node_id"]?.stringValue }).count == count else { return false }
        return links.allSatisfy { link in
            link["in_step"] == true && link["idle"] == true
                && link["pending_send"]?["sequences"] == 0 && link["pending_send"]?["documents"] == 0
                && link["pending_receive"]?["sequences"] == 0 && link["pending_receive"]?["documents"] == 0
        }
    }

    /// Both nodes say they are in step with their one peer.
    static func bothInStep(_ a: TestNode, _ b: TestNode) async throws -> Bool {
        guard try await inStep(a, peers: 1) else { return false }
        return try await inStep(b, peers: 1)
    }

    /// Every document with its leaf revisions.
    static func snapshot(_ node: TestNode) async throws -> [String: [String]] {
        let all = try await node.request("GET", "/db/_changes?style=all_docs", admin: true).json
        var result: [String: [String]] = [:]
        for entry in all["results"]?.arrayValue ?? [] {
            guard let id = entry["id"]?.stringValue else { continue }
            result[id] = (entry["changes"]?.arrayValue ?? []).compactMap { $0["rev"]?.stringValue }.sorted()
        }
        return result
    }

    @Test func aMeshOfThreeSaysItIsInStepOnceItConverged() async throws {
        let b = try await Self.start()
        let c = try await Self.start()
        let a = try await Self.start(peers: [Self.url(b.ports.publicPort), Self.url(c.ports.publicPort)])
        defer { Task { for node in [a, b, c] { await node.stop() } } }
        let nodes = [a, b, c]
        #expect(try await eventually { try await Self.inStep(a, peers: 2) })

        let count = 40
        for index in 0..<count {
            let response = try await b.request("PUT", "/db/b\(index)", json: ["n": .int(Int64(index))], admin: true)
            #expect(response.status == 201)
        }
        #expect(try await Self.peers(b)["last_seq"]?.intValue == Int64(count))

        let converged = try await eventually {
            for node in nodes where try await !Self.inStep(node, peers: node === a ? 2 : 1) { return false }
            return true
        }
        if !converged {
            Issue.record("not in step: \(try await Self.peers(a)) \(try await Self.peers(b)) \(try await Self.peers(c))")
        }
        let pictures = try await nodes.asyncMap { try await Self.snapshot($0) }
        #expect(pictures[0].count == count)
        #expect(pictures[0] == pictures[1] && pictures[1] == pictures[2])
        // Every node in step: `_mesh` says so per group, and so do the metrics.
        let mesh = try await c.request("GET", "/_mesh", admin: true).json
        #expect(mesh["meshes"]?[0]?["in_step"] == true, "\(mesh)")
        let metrics = try await a.request("GET", "/_metrics", admin: true).text
        #expect(metrics.contains("shoal_mesh_in_step{db=\"db\"} 1"), "\(metrics)")
        #expect(metrics.contains("shoal_mesh_peer_in_step{db=\"db\",peer=\"\(b.node.nodeID)\"} 1")
            || metrics.contains("shoal_mesh_peer_in_step{peer=\"\(b.node.nodeID)\",db=\"db\"} 1"), "\(metrics)")
        #expect(metrics.contains("shoal_mesh_peer_pending_send_sequences"))
    }

    @Test func aSilentLinkIsNeverInStepWhileThePeerIsBehind() async throws {
        let b = try await Self.start()
        let relay = try TCPRelay(target: b.ports.publicPort)
        defer { relay.close() }
        let a = try await Self.start(peers: [Self.url(relay.port)])
        defer { Task { for node in [a, b] { await node.stop() } } }
        #expect(try await eventually { try await Self.bothInStep(a, b) })

        // A partition: the link stays open, nothing gets through.
        relay.isSilent = true
        let count = 12
        for index in 0..<count {
            let response = try await a.request("PUT", "/db/a\(index)", json: ["n": .int(Int64(index))], admin: true)
            #expect(response.status == 201)
        }
        // A knows at once that B lacks them: pending, not idle, not in step.
        let writer = try await Self.peers(a)
        let link = writer["peers"]?[0]
        #expect(writer["in_step"] == false, "\(writer)")
        #expect(link?["in_step"] == false)
        #expect(link?["idle"] == false)
        #expect(link?["pending_send"]?["sequences"] == .int(Int64(count)), "\(writer)")
        #expect(link?["pending_send"]?["documents"] == .int(Int64(count)), "\(writer)")
        // However long the partition lasts, A never claims to be in step while B lacks them;
        // B stops claiming it too once A's reports stop coming (or the heartbeat drops the link).
        var polls = 0
        let bNoticed = try await eventually(every: .milliseconds(100)) {
            polls += 1
            let aView = try await Self.peers(a)
            #expect(aView["in_step"] == false, "\(aView)")
            #expect(try await b.request("GET", "/db/a0", admin: true).status == 404)
            return try await Self.peers(b)["in_step"] == false
        }
        #expect(bNoticed)
        #expect(polls > 0)
        // Its link gone, B still counts A: a node cut off from its peers is not in step.
        if try await Self.peers(b)["peers"]?.arrayValue?.isEmpty == true {
            #expect(try await Self.peers(b)["unlinked"] == [.string(a.node.nodeID)])
        }

        // The heartbeat gives A's link up (what the relay swallowed is gone for good); A
        // still counts what B lacks.
        #expect(try await eventually {
            let link = try await Self.peers(a)["peers"]?[0]
            return link?["connected_since"] == nil && link?["pending_send"]?["documents"] == .int(Int64(count))
        })

        // Healed: both sides converge and say so, and the documents are the same.
        relay.isSilent = false
        let converged = try await eventually { try await Self.bothInStep(a, b) }
        if !converged { Issue.record("not in step: \(try await Self.peers(a)) \(try await Self.peers(b))") }
        let (pictureA, pictureB) = (try await Self.snapshot(a), try await Self.snapshot(b))
        #expect(pictureA == pictureB)
        #expect(pictureB.count == count)
    }

    @Test func aNodeWithoutPeersIsInStep() async throws {
        let node = try await Self.start()
        defer { Task { await node.stop() } }
        _ = try await node.request("PUT", "/db/one", json: ["n": 1], admin: true)
        let answer = try await Self.peers(node)
        #expect(answer["in_step"] == true)
        #expect(answer["last_seq"] == 1)
        #expect(answer["peers"]?.arrayValue?.isEmpty == true)
        #expect(answer["unlinked"] == [])
    }
}
