import BLIP
import DocumentModel
import Foundation
import ShoalNode
import Testing
import TestSupport

/// A Shoal peer's `changes` rows carry the stored vectors of the winners they offer (the
/// `shoal-vvs` property, one per row), on the raw BLIP wire: the node that has the revision answers "have it"
/// and keeps both vectors; a malformed vector is a 400 naming the document, and nothing
/// is stored (docs/architecture.md §10.9, "Convergence"; Replication.md "Pulling").
@Suite struct OfferedVectorWireTests {
    typealias RawClient = CollectionsBLIPTests.RawClient

    /// A node holding `doc` written over REST, its revision ID and stored vector.
    static func nodeWithDocument() async throws -> (node: TestNode, rev: String, vector: String) {
        let node = try await TestNode.start { configuration in configuration.heartbeat = .seconds(60) }
        let written = try await node.request("PUT", "/db/doc", json: ["same": true], admin: true)
        let rev = try #require(written.json["rev"]?.stringValue)
        let vector = try #require(try await Self.vector(node))
        return (node, rev, vector)
    }

    static func vector(_ node: TestNode) async throws -> String? {
        try await node.request("GET", "/db/_raw/doc", admin: true).json["_sync"]?["vv"]?.stringValue
    }

    @Test func anOfferedVectorOfARevisionTheNodeHasIsReconciled() async throws {
        let (node, rev, own) = try await Self.nodeWithDocument()
        defer { Task { await node.stop() } }
        let port = node.ports.publicPort
        // The same edit made on another node: its own version of the same revision.
        let peer = VersionVector(Version(time: 0x18ec_0000_0000_0000, source: SourceID(high: 0x0707, low: 0x0707)))
        let peerText = peer.text(style: .syncGateway)
        try await offThePool {
            let client = try RawClient(port: port, path: "/db/_blipsync", headers: [:])
            let offer = try client.send(
                [("Profile", "changes"), ("ignoreNoConflicts", "true"), ("shoal-vvs", JSON.array([.string(peerText)]).canonicalString)],
                body: [[1, "doc", .string(rev)]])
            let answer = try client.answer(to: offer)
            #expect(answer.type == 1 && String(decoding: answer.body, as: UTF8.self) == "[]", "have it: \(answer)")
        }
        let expected = try VersionVector.reconciling([try VersionVector(parsing: own), peer])
        #expect(try await Self.vector(node) == expected.text(style: .syncGateway))
    }

    @Test func aMalformedOfferedVectorIsRefusedNamingTheDocument() async throws {
        let (node, rev, own) = try await Self.nodeWithDocument()
        defer { Task { await node.stop() } }
        let port = node.ports.publicPort
        try await offThePool {
            let client = try RawClient(port: port, path: "/db/_blipsync", headers: [:])
            let offer = try client.send(
                [("Profile", "changes"), ("ignoreNoConflicts", "true"), ("shoal-vvs", #"["12@not-a-source"]"#)],
                body: [[1, "doc", .string(rev)]])
            let refusal = try client.answer(to: offer)
            #expect(refusal.type == 2 && refusal.property("Error-Code") == "400", "\(refusal)")
            #expect(String(decoding: refusal.body, as: UTF8.self).contains("'doc'"), "\(refusal)")
            // A `shoal-vvs` that is not one vector per row is a 400 too.
            for bad in [#"{"a":1}"#, #"["a","b"]"#, "[5]", "not json"] {
                let offer = try client.send(
                    [("Profile", "changes"), ("ignoreNoConflicts", "true"), ("shoal-vvs", bad)], body: [[2, "doc", .string(rev)]])
                let refusal = try client.answer(to: offer)
                #expect(refusal.type == 2 && refusal.property("Error-Code") == "400", "\(bad): \(refusal)")
            }
        }
        #expect(try await Self.vector(node) == own)
    }
}
