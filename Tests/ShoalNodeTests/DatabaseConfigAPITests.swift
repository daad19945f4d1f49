import DocumentModel
import Foundation
import ShoalNode
import Testing
import TestSupport

/// The database config API (`/{db}/_config…`, admin port): a sync function deployed
/// through it is compiled first, takes effect at once (with a resync), survives a
/// restart, and gives way to the config file's when that changes; conflict policies
/// change the same way; `_sync_test` runs a function and writes nothing.
@Suite struct DatabaseConfigAPITests {
    static let ownerOnly = """
        function(doc, oldDoc) {
          if (!doc.owner) throw({forbidden: "documents need an owner"});
          channel("owner-" + doc.owner);
          access(doc.owner, "owner-" + doc.owner);
        }
        """

    @Test func aDeployedSyncFunctionIsCompiledAppliedAndKeptAcrossRestarts() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-config-api")
        defer { directory.remove() }
        var node = try await TestNode.start(persistent: true, directory: directory)
        let config = try await node.request("GET", "/db/_config", admin: true)
        config.expectStatus(200)
        #expect(config.json["sync"] == .null && config.json["sync_origin"] == "default", "\(config)")
        try await node.request("GET", "/db/_config").expectStatus(403)
        try await node.request("PUT", "/db/before", json: ["n": 1], admin: true).expectStatus(201)

        // Bad JavaScript: 400 with the engine's message, nothing changes.
        let bad = try await node.request("PUT", "/db/_config/sync", raw: Array("function(doc) { channel(".utf8), admin: true)
        bad.expectError(400, "bad_request")
        #expect(bad.json["reason"]?.stringValue?.contains("SyntaxError") == true, "\(bad)")
        try await node.request("PUT", "/db/still-open", json: ["n": 2], admin: true).expectStatus(201)

        let deployed = try await node.request(
            "PUT", "/db/_config/sync", raw: Array(Self.ownerOnly.utf8), headers: ["Content-Type": "application/javascript"], admin: true)
        deployed.expectStatus(201)
        #expect(deployed.json["resync"]?["processed"] == 2, "\(deployed)")
        let source = try await node.request("GET", "/db/_config/sync", admin: true)
        #expect(source.text == Self.ownerOnly && source.headers["content-type"] == "application/javascript")
        try await node.request("PUT", "/db/no-owner", json: ["n": 3], admin: true).expectError(403, "forbidden", reason: "documents need an owner")
        try await node.request("PUT", "/db/owned", json: ["owner": "ann"], admin: true).expectStatus(201)
        #expect(try await node.request("GET", "/db/_raw/owned", admin: true).json["_sync"]?["channels"] == ["owner-ann": .null])

        // A restart with the same config file keeps the deployed function.
        await node.stop(keepingData: true)
        node = try await TestNode.start(persistent: true, directory: directory)
        #expect(try await node.request("GET", "/db/_config", admin: true).json["sync_origin"] == "admin_api")
        try await node.request("PUT", "/db/no-owner", json: ["n": 3], admin: true).expectStatus(403)

        // A config file whose function changed wins, and the stored one is dropped.
        await node.stop(keepingData: true)
        node = try await TestNode.start(persistent: true, directory: directory) { configuration in
            configuration.databases[0].sync = "function(doc, oldDoc) { channel('file'); }"
        }
        let fromFile = try await node.request("GET", "/db/_config", admin: true).json
        #expect(fromFile["sync_origin"] == "config_file" && fromFile["sync"] == "function(doc, oldDoc) { channel('file'); }")
        try await node.request("PUT", "/db/no-owner", json: ["n": 3], admin: true).expectStatus(201)

        // DELETE goes back to the file's function.
        try await node.request("PUT", "/db/_config/sync", raw: Array(Self.ownerOnly.utf8), admin: true).expectStatus(201)
        try await node.request("DELETE", "/db/_config/sync", admin: true).expectStatus(200)
        #expect(try await node.request("GET", "/db/_config", admin: true).json["sync_origin"] == "config_file")
        await node.stop()
    }

    @Test func syncTestRunsTheFunctionAndWritesNothing() async throws {
        let node = try await TestNode.start { configuration in
            configuration.passwordIterations = 1000
            configuration.databases[0].users = ["ann": ["password": "pw", "admin_channels": ["a"]]]
        }
        defer { Task { await node.stop() } }
        let accepted = try await node.request("POST", "/db/_sync_test", json: [
            "doc": ["owner": "ann"], "sync": .string(Self.ownerOnly),
        ], admin: true)
        accepted.expectStatus(200)
        #expect(accepted.json["ok"] == true && accepted.json["channels"] == ["owner-ann"], "\(accepted)")
        #expect(accepted.json["access"] == ["ann": ["owner-ann"]], "\(accepted)")
        let rejected = try await node.request("POST", "/db/_sync_test", json: ["doc": ["n": 1], "sync": .string(Self.ownerOnly)], admin: true)
        #expect(rejected.json["ok"] == false && rejected.json["status"] == 403, "\(rejected)")
        #expect(rejected.json["reason"] == "documents need an owner", "\(rejected)")
        // As a user: requireUser sees who runs it.
        let asUser = try await node.request("POST", "/db/_sync_test", json: [
            "doc": ["n": 1], "user": "ann", "sync": "function(doc) { requireUser('bob'); }",
        ], admin: true)
        #expect(asUser.json["ok"] == false, "\(asUser)")
        // The database's function (the default: channels from `channels`).
        let byDefault = try await node.request("POST", "/db/_sync_test", json: ["doc": ["channels": ["x"]]], admin: true)
        #expect(byDefault.json["channels"] == ["x"], "\(byDefault)")
        try await node.request("POST", "/db/_sync_test", json: ["doc": ["n": 1], "sync": "function( {"], admin: true).expectError(400, "bad_request")
        try await node.request("POST", "/db/_sync_test", json: ["doc": 5], admin: true).expectError(400, "bad_request")
        try await node.request("POST", "/db/_sync_test", raw: Array("{nope".utf8), headers: ["Content-Type": "application/json"], admin: true)
            .expectError(400, "bad_request")
        try await node.request("POST", "/db/_sync_test", json: ["doc": [:], "user": "nobody"], admin: true).expectStatus(404)
        try await node.request("POST", "/db/_sync_test", json: ["doc": [:]]).expectStatus(401)
        #expect(try await node.request("GET", "/db/", admin: true).json["doc_count"] == 0)
    }

    @Test func conflictPoliciesChangeThroughTheAPI() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-config-conflicts")
        defer { directory.remove() }
        var node = try await TestNode.start(persistent: true, directory: directory)
        let before = try await node.request("GET", "/db/_config/conflicts", admin: true)
        #expect(before.json["default"] == "winner", "\(before)")
        let changed = try await node.request("PUT", "/db/_config/conflicts", json: ["default": "none", "types": ["task": "merge"]], admin: true)
        changed.expectStatus(201)
        #expect(changed.json["conflicts"]?["types"] == ["task": "merge"], "\(changed)")
        #expect(try await node.request("GET", "/db/_conflicts", admin: true).json["policies"]?["default"] == "none")
        try await node.request("PUT", "/db/_config/conflicts", json: ["default": "sideways"], admin: true).expectError(400, "bad_request")
        try await node.request("PUT", "/db/_config/conflicts", json: ["default": "js"], admin: true).expectError(400, "bad_request")
        try await node.request("PUT", "/db/_config", json: ["revs_limit": 5], admin: true).expectError(400, "bad_request")
        await node.stop(keepingData: true)
        node = try await TestNode.start(persistent: true, directory: directory)
        let after = try await node.request("GET", "/db/_config", admin: true).json
        #expect(after["conflicts"]?["default"] == "none" && after["conflicts_origin"] == "admin_api", "\(after)")
        await node.stop()
    }
}
