import DocumentModel
import Foundation
import Testing
import TestSupport

/// A node restarted with another sync function recomputes stored access by itself;
/// `POST /{db}/_resync` does it on demand (admin only).
@Suite struct ResyncNodeTests {
    static func start(sync: String, directory: TemporaryDirectory) async throws -> TestNode {
        try await TestNode.start(persistent: true, directory: directory) { configuration in
            configuration.passwordIterations = 1000
            configuration.databases[0].sync = sync
            configuration.databases[0].users = ["ann": ["password": "pass", "admin_channels": ["team"]]]
        }
    }

    static func visible(_ node: TestNode) async throws -> [String] {
        try await node.request("GET", "/db/_all_docs", headers: TestNode.basic("ann", "pass"))
            .json["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
    }

    @Test func restartWithAnotherFunctionMovesDocuments() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-resync")
        defer { directory.remove() }
        var node = try await Self.start(sync: "function(doc) { if (doc.team) channel('team'); }", directory: directory)
        for (id, team) in [("a", true), ("b", false), ("c", true)] {
            let body: JSON = team ? ["team": true, "mine": false] : ["mine": true]
            #expect(try await node.request("PUT", "/db/\(id)", json: body, admin: true).status == 201)
        }
        #expect(try await Self.visible(node) == ["a", "c"])
        await node.stop(keepingData: true)

        node = try await Self.start(sync: "function(doc) { if (doc.mine) channel('team'); }", directory: directory)
        #expect(try await Self.visible(node) == ["b"], "the new function's channels, without an explicit _resync")
        let changes = try await node.request("GET", "/db/_changes?since=0", headers: TestNode.basic("ann", "pass")).json
        let removed = changes["results"]?.arrayValue?.filter { $0["removed"] != nil }.compactMap { $0["id"]?.stringValue }
        #expect(removed?.sorted() == ["a", "c"], "\(changes)")

        #expect(try await node.request("POST", "/db/_resync", json: [:], headers: TestNode.basic("ann", "pass")).status == 403)
        let resync = try await node.request("POST", "/db/_resync", json: [:], admin: true)
        #expect(resync.status == 200)
        #expect(resync.json["docs_processed"] == 3)
        #expect(resync.json["docs_changed"] == 0)
        await node.stop()
    }
}
