import DocumentModel
import Foundation
import Testing
import TestSupport

/// Which node wrote a revision, as `GET /{db}/_raw/{doc}` shows it (`origin` of each
/// `_sync.tree` entry): on the node whose resolver resolved a conflict, the resolution is
/// that node's resolver's; on its mesh peer, the same revisions came from that node.
@Suite struct RevisionOriginNodeTests {
    static let hexA = String(repeating: "a", count: 32)
    static let hexB = String(repeating: "b", count: 32)
    static let hexC = String(repeating: "c", count: 32)

    /// `doc` with two live branches (2-bbb…, 2-ccc… on 1-aaa…), written with
    /// `new_edits=false` through `node`'s admin API.
    static func writeConflict(on node: TestNode) async throws {
        try await node.request("POST", "/db/_bulk_docs", json: ["new_edits": false, "docs": [
            ["_id": "doc", "_rev": .string("2-\(hexB)"), "_revisions": ["start": 2, "ids": [.string(hexB), .string(hexA)]], "side": "left"],
            ["_id": "doc", "_rev": .string("2-\(hexC)"), "_revisions": ["start": 2, "ids": [.string(hexC), .string(hexA)]], "side": "right"],
        ]], admin: true).expectStatus(201)
    }

    static func tree(_ node: TestNode, _ id: String) async throws -> [String: JSON] {
        let raw = try await node.request("GET", "/db/_raw/\(id)", admin: true)
        var byRev: [String: JSON] = [:]
        for entry in raw.json["_sync"]?["tree"]?.arrayValue ?? [] {
            if let rev = entry["rev"]?.stringValue { byRev[rev] = entry }
        }
        return byRev
    }

    @Test func aResolutionIsTheResolversOnItsNodeAndThePeersOnTheOther() async throws {
        // B keeps conflicts (policy none): only A's resolver writes the resolution.
        let b = try await TestNode.start(conflicts: ConflictPolicy.none)
        let a = try await TestNode.start(conflicts: .winner) { configuration in
            configuration.heartbeat = .milliseconds(500)
            configuration.peers = ["ws://127.0.0.1:\(b.ports.publicPort)/db"]
        }
        defer { Task { for node in [a, b] { await node.stop() } } }
        let aID = try #require(try await a.request("GET", "/_mesh", admin: true).json["node_id"]?.stringValue)
        let bID = try #require(try await b.request("GET", "/_mesh", admin: true).json["node_id"]?.stringValue)

        // Two branches written on A through its API: a conflict A's resolver resolves.
        try await Self.writeConflict(on: a)
        // A document written on B reaches A over A's own (dialed) link.
        try await b.request("PUT", "/db/from-b", json: ["n": 1], admin: true).expectStatus(201)

        // A: the branches are local, the tombstone on the losing leaf is A's resolver's.
        #expect(try await eventually { try await Self.tree(a, "doc").count == 4 })
        let onA = try await Self.tree(a, "doc")
        #expect(onA["2-\(Self.hexB)"]?["origin"] == ["kind": "local", "node": .string(aID)], "\(onA)")
        let tombstone = try #require(onA.values.first { $0["parent"] == .string("2-\(Self.hexB)") })
        #expect(tombstone["deleted"] == true)
        #expect(tombstone["origin"] == ["kind": "resolver", "node": .string(aID), "detail": "winner"], "\(tombstone)")

        // B: the same revisions, the resolution received from A.
        #expect(try await eventually { try await Self.tree(b, "doc").count == 4 })
        let onB = try await Self.tree(b, "doc")
        #expect(Set(onB.keys) == Set(onA.keys))
        let tombstoneRev = try #require(tombstone["rev"]?.stringValue)
        #expect(onB[tombstoneRev]?["origin"] == ["kind": "peer", "node": .string(aID)], "\(onB)")
        #expect(onB["2-\(Self.hexC)"]?["origin"]?["kind"] == "peer")

        // A received B's document from B (the node ID its link learned on connecting).
        #expect(try await eventually { try await Self.tree(a, "from-b").count == 1 })
        let fromB = try await Self.tree(a, "from-b").values.first
        #expect(fromB?["origin"]?["kind"] == "peer" && fromB?["origin"]?["node"] == .string(bID), "\(String(describing: fromB))")
        // Over A's dial the remote URL says where; over a link B dialed (a fallback) there is none.
        if let detail = fromB?["origin"]?["detail"]?.stringValue {
            #expect(detail.hasPrefix("ws://127.0.0.1:\(b.ports.publicPort)/db"), "\(detail)")
        }
    }

    @Test func chosenLeafResolutionThroughTheAPIIsThisNodesResolvers() async throws {
        let node = try await TestNode.start(conflicts: ConflictPolicy.none)
        defer { Task { await node.stop() } }
        let nodeID = try #require(try await node.request("GET", "/_mesh", admin: true).json["node_id"]?.stringValue)
        try await Self.writeConflict(on: node)
        let answer = try await node.request("POST", "/db/doc/_resolve", json: ["rev": .string("2-\(Self.hexB)")], admin: true)
        let written = try #require(answer.json["revs"]?[0]?.stringValue, "\(answer)")
        let tree = try await Self.tree(node, "doc")
        #expect(tree[written]?["origin"] == [
            "kind": "resolver", "node": .string(nodeID), "detail": .string("_resolve: keep 2-\(Self.hexB)"),
        ], "\(tree)")
    }
}
