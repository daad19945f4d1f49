import DocumentModel
import Foundation
import Testing
import TestSupport

/// A replication with `"client": true` dials as Couchbase Lite does (no header naming
/// Shoal's replicator), so the node serves it as a client: in both BLIP generations
/// (`rev-trees`: CBMobile_3, `version-vectors`: CBMobile_4) what the client writes
/// reaches the node and what the node has reaches the client, with the same winners.
@Suite struct ClientModeReplicationTests {
    @Test(arguments: ["rev-trees", "version-vectors"])
    func aClientReplicationPushesAndPulls(versioning: String) async throws {
        let server = try await TestNode.start()
        let client = try await TestNode.start()
        defer { Task { for node in [server, client] { await node.stop() } } }
        for index in 0..<5 { _ = try await server.request("PUT", "/db/s-\(index)", json: ["n": .int(Int64(index))], admin: true) }
        try await client.request("PUT", "/db/_replication/up", json: [
            "remote": .string("ws://127.0.0.1:\(server.ports.publicPort)/db"), "direction": "pushAndPull",
            "continuous": true, "client": true, "versioning": .string(versioning),
        ], admin: true).expectStatus(201)
        #expect(try await client.request("GET", "/db/_replication/up", admin: true).json["client"] == true)
        for index in 0..<5 { _ = try await client.request("PUT", "/db/c-\(index)", json: ["n": .int(Int64(index))], admin: true) }
        // An update of a pulled document goes back as a child of the node's revision.
        #expect(try await eventually { try await client.request("GET", "/db/s-0", admin: true).status == 200 })
        let pulled = try await client.request("GET", "/db/s-0", admin: true).json
        try await client.request("PUT", "/db/s-0", json: ["n": 100, "_rev": pulled["_rev"]!], admin: true).expectStatus(201)
        let same = try await eventually {
            let a = try await server.request("GET", "/db/_all_docs", admin: true).json["rows"]?.arrayValue ?? []
            let b = try await client.request("GET", "/db/_all_docs", admin: true).json["rows"]?.arrayValue ?? []
            return a.count == 10 && a == b
        }
        #expect(same, "the node and the client differ")
        #expect(try await server.request("GET", "/db/s-0", admin: true).json["n"] == 100)
        let status = try await client.request("GET", "/db/_replicationStatus/up", admin: true).json
        #expect(status["docs_failed_push"] == nil || status["docs_failed_push"] == 0, "\(status)")
    }
}
