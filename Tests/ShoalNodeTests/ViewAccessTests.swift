import DocumentModel
import Foundation
import ShoalNode
import Testing
import TestSupport

/// Views on the public port: a user gets rows only from documents in their channels,
/// reductions count only those rows, and `_view_cleanup` stays on the admin port. And a
/// map function that never returns stalls neither writes nor other views.
@Suite(.serialized) struct ViewAccessTests {
    static func startNode() async throws -> TestNode {
        try await TestNode.start(databases: ["db"]) { configuration in
            configuration.passwordIterations = 1000
            configuration.databases[0].users = [
                "alice": ["password": "pass", "admin_channels": ["a"]],
                "bob": ["password": "pass", "admin_channels": ["b"]],
            ]
        }
    }

    private func rows(_ result: HTTPResult) -> [JSON] { result.json["rows"]?.arrayValue ?? [] }

    @Test func usersSeeOnlyTheirRowsAndTheirReductions() async throws {
        let node = try await Self.startNode()
        defer { Task { await node.stop() } }
        let alice = TestNode.basic("alice", "pass"), bob = TestNode.basic("bob", "pass")
        try await node.request("PUT", "/db/_design/d", json: [
            "views": [
                "byGroup": ["map": "function(doc) { if (doc.g) emit([doc.g, doc._id], doc.n); }", "reduce": "_sum"],
            ],
        ], admin: true).expectStatus(201)
        for i in 0..<6 {
            let channel = i < 2 ? "a" : "b"
            try await node.request("PUT", "/db/doc\(i)", json: ["g": .string(i % 2 == 0 ? "x" : "y"), "n": .int(Int64(i)), "channels": [.string(channel)]], admin: true)
                .expectStatus(201)
        }
        let base = "/db/_design/d/_view/byGroup"
        // Admin: everything.
        let all = try await node.request("GET", base + "?group_level=1", admin: true)
        #expect(all.json == ["rows": [["key": ["x"], "value": 6], ["key": ["y"], "value": 9]]])
        // Alice reads doc0 and doc1 only: her rows, her totals.
        let aliceRows = try await node.request("GET", base + "?reduce=false", headers: alice)
        #expect(rows(aliceRows).map { $0["id"] } == ["doc0", "doc1"])
        #expect(aliceRows.json["total_rows"] == 2)
        let aliceGroups = try await node.request("GET", base + "?group_level=1", headers: alice)
        #expect(aliceGroups.json == ["rows": [["key": ["x"], "value": 0], ["key": ["y"], "value": 1]]])
        let aliceTotal = try await node.request("GET", base, headers: alice)
        #expect(aliceTotal.json == ["rows": [["key": .null, "value": 1]]])
        // Bob: the other four, with skip and limit counted over his rows only.
        let bobPage = try await node.request("GET", base + "?reduce=false&skip=1&limit=2", headers: bob)
        #expect(rows(bobPage).map { $0["id"] } == ["doc4", "doc3"])
        #expect(try await node.request("GET", base, headers: bob).json == ["rows": [["key": .null, "value": 14]]])
        // include_docs never shows a document the user cannot read (a linked one either).
        let docs = try await node.request("GET", base + "?reduce=false&include_docs=true", headers: alice)
        #expect(rows(docs).map { $0["doc"]?["_id"] } == ["doc0", "doc1"])
        // Not authenticated: 401; cleanup: admin only.
        try await node.request("GET", base).expectError(401, "Unauthorized")
        try await node.request("POST", "/db/_view_cleanup", json: [:], headers: alice).expectError(403, "forbidden")
    }

    @Test func aRunawayMapStallsNeitherWritesNorOtherViews() async throws {
        // A 10 s budget, so that the bounds below (5 s) leave room for the suite's
        // saturated two cores (where a node's stop was seen to take 6 s) and still fail a
        // write or query that waited for the map.
        let node = try await TestNode.start { $0.viewTimeout = .seconds(10) }
        defer { Task { await node.stop() } }
        try await node.request("PUT", "/db/_design/spin", json: ["views": ["v": ["map": "function(doc) { while (true) {} }"]]], admin: true)
            .expectStatus(201)
        try await node.request("PUT", "/db/_design/ok", json: ["views": ["v": ["map": "function(doc) { emit(doc._id, null); }"]]], admin: true)
            .expectStatus(201)
        try await node.request("PUT", "/db/first", json: ["a": 1], admin: true).expectStatus(201)
        let clock = ContinuousClock()
        let spinning = Task { try await node.request("GET", "/db/_design/spin/_view/v", admin: true) }
        try await Task.sleep(for: .milliseconds(200))
        // While the map spins on its own thread, writes and other queries go on: a write
        // that waited for the map would wait for its whole budget.
        for i in 0..<10 {
            let start = clock.now
            try await node.request("PUT", "/db/w\(i)", json: ["i": .int(Int64(i))], admin: true).expectStatus(201)
            #expect(clock.now - start < .seconds(5), "a write waited for the runaway map")
        }
        let start = clock.now
        let other = try await node.request("GET", "/db/_design/ok/_view/v", admin: true)
        #expect(rows(other).count == 11)
        #expect(clock.now - start < .seconds(5))
        // The runaway view fails after its budget with CouchDB's error, and then at once.
        try await spinning.value.expectError(500, "os_process_error")
        let again = clock.now
        try await node.request("GET", "/db/_design/spin/_view/v", admin: true).expectError(500, "os_process_error")
        // At once: not after another budget.
        #expect(clock.now - again < .seconds(5))
        try await node.request("PUT", "/db/last", json: ["a": 1], admin: true).expectStatus(201)
    }
}
