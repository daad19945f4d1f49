import BLIP
import DocumentModel
import Foundation
import Replication
import ShoalNode
import Testing
import TestSupport

/// Shoal's own replicator over `BLIP_3+CBMobile_4` (`"versioning": "version-vectors"`), as
/// Couchbase Lite 4's replicator speaks it to Sync Gateway 4: `subChanges` with
/// `versioning`, `changes` answered per version, `proposeChanges` with
/// `conflictIncludesRev` (retried with the peer's version as parent when ours descends
/// from it), `rev` with vectors, and conflicts pulled as branches the node resolves.
@Suite struct VersionVectorReplicatorTests {
    static func status(_ node: TestNode, _ id: String) async throws -> JSON {
        try await node.request("GET", "/db/_replicationStatus/\(id)", admin: true).json
    }

    /// Runs a one-shot replication `id` on `client` against `server` and waits until it stopped.
    static func replicate(
        _ client: TestNode, to server: TestNode, id: String, direction: String = "pushAndPull",
        versioning: String = "version-vectors"
    ) async throws {
        let created = try await client.request("PUT", "/db/_replication/\(id)", json: [
            "remote": .string("ws://127.0.0.1:\(server.ports.publicPort)/db"), "direction": .string(direction),
            "versioning": .string(versioning),
        ], admin: true)
        #expect(created.status == 201, "\(created.json)")
        let stopped = try await eventually(timeout: .seconds(60)) { try await status(client, id)["status"] == "stopped" }
        let last = try await status(client, id)
        #expect(stopped, "\(last)")
        // What was spoken: versions when asked for (both sides speak them), else revision trees.
        #expect(last["subprotocol"]?.stringValue == (versioning == "version-vectors" ? "BLIP_3+CBMobile_4" : "BLIP_3+CBMobile_3"),
                "\(last)")
    }

    static func document(_ node: TestNode, _ id: String) async throws -> JSON {
        try await node.request("GET", "/db/\(id)?conflicts=true", admin: true).json
    }

    /// Document `d` written on `server` and pulled by `client` over versions: the
    /// revision both then edit (returned as the client has it).
    static func sharedDocument(_ server: TestNode, _ client: TestNode) async throws -> JSON {
        #expect(try await server.request("PUT", "/db/d", json: ["v": 0], admin: true).status == 201)
        try await replicate(client, to: server, id: "base", direction: "pull")
        let base = try await document(client, "d")
        #expect(base["v"] == 0)
        return base
    }

    /// The user properties of a document (no `_` keys).
    static func properties(_ document: JSON) -> [String: JSON] {
        (document.objectValue ?? [:]).filter { !$0.key.hasPrefix("_") }
    }

    @Test func theDefinitionKeepsItsVersioning() throws {
        let parsed = try ReplicationConfiguration(
            id: "r", json: ["remote": "ws://h:1/db", "versioning": "version-vectors"])
        #expect(parsed.versioning == .cbMobile4)
        #expect(parsed.json["versioning"] == "version-vectors")
        #expect(try ReplicationConfiguration(id: "r", json: ["remote": "ws://h:1/db"]).versioning == .cbMobile3)
        #expect(throws: ReplicationConfigurationError.self) {
            try ReplicationConfiguration(id: "r", json: ["remote": "ws://h:1/db", "versioning": "vectors"])
        }
    }

    @Test func bothWaysBetweenTwoNodesOverVersions() async throws {
        let server = try await TestNode.start()
        let client = try await TestNode.start()
        defer { Task { for node in [server, client] { await node.stop() } } }
        #expect(try await server.request("PUT", "/db/s1", json: ["from": "server"], admin: true).status == 201)
        #expect(try await client.request("PUT", "/db/c1", json: ["from": "client"], admin: true).status == 201)
        try await Self.replicate(client, to: server, id: "first")
        for node in [server, client] {
            for id in ["s1", "c1"] {
                #expect(try await node.request("GET", "/db/\(id)", admin: true).status == 200)
            }
        }
        // The same current version on both sides: the vector travelled with the revision.
        for id in ["s1", "c1"] {
            let (a, b) = (try await Self.document(server, id), try await Self.document(client, id))
            #expect(a["_cv"] != nil && a["_cv"] == b["_cv"], "\(a) \(b)")
            #expect(a["_rev"] == b["_rev"], "a first revision is named alike: \(a) \(b)")
        }

        // Newer on the server: pulled as the successor of the client's revision.
        let s1 = try await Self.document(server, "s1")
        let edited = try await server.request(
            "PUT", "/db/s1", json: ["from": "server", "edit": 2, "_rev": s1["_rev"]!], admin: true)
        #expect(edited.status == 201)
        // Newer on the client: proposed, accepted as the successor on the server.
        let c1 = try await Self.document(client, "c1")
        #expect(try await client.request(
            "PUT", "/db/c1", json: ["from": "client", "edit": 2, "_rev": c1["_rev"]!], admin: true).status == 201)
        try await Self.replicate(client, to: server, id: "second")
        for id in ["s1", "c1"] {
            let (a, b) = (try await Self.document(server, id), try await Self.document(client, id))
            #expect(Self.properties(a) == Self.properties(b), "\(a) \(b)")
            #expect(Self.properties(a)["edit"] == 2)
            #expect(a["_cv"] == b["_cv"], "\(a) \(b)")
            #expect(a["_conflicts"] == nil && b["_conflicts"] == nil, "no conflict: \(a) \(b)")
        }
        #expect(try await Self.status(client, "second")["docs_failed_push"]?.intValue == 0)
    }

    @Test func aConflictIsPulledResolvedHereAndPushedBack() async throws {
        let (server, client) = (try await TestNode.start(), try await TestNode.start())
        defer { Task { for node in [server, client] { await node.stop() } } }
        let base = try await Self.sharedDocument(server, client)
        // Both sides edit the same revision.
        #expect(try await server.request(
            "PUT", "/db/d", json: ["v": 1, "by": "server", "_rev": base["_rev"]!], admin: true).status == 201)
        #expect(try await client.request(
            "PUT", "/db/d", json: ["v": 1, "by": "client", "_rev": base["_rev"]!], admin: true).status == 201)

        // The push is refused (409: the server's version is not in the client's vector),
        // the pull brings the server's revision as a branch, which the client resolves.
        try await Self.replicate(client, to: server, id: "conflict")
        let resolved = try await eventually { try await Self.document(client, "d")["_conflicts"] == nil }
        let resolution = try await Self.document(client, "d")
        #expect(resolved, "\(resolution)")
        // The resolution holds the server's version: proposed again, the server takes it.
        try await Self.replicate(client, to: server, id: "after")
        let (a, b) = (try await Self.document(server, "d"), try await Self.document(client, "d"))
        #expect(Self.properties(a) == Self.properties(b), "\(a) \(b)")
        #expect(a["_cv"] == b["_cv"], "\(a) \(b)")
        #expect(a["_conflicts"] == nil, "the server took the resolution as its successor: \(a)")
        // Nothing more to send either way.
        try await Self.replicate(client, to: server, id: "quiet")
        let quiet = try await Self.status(client, "quiet")
        #expect(quiet["docs_pushed"]?.intValue == 0 && quiet["docs_pulled"]?.intValue == 0, "\(quiet)")
    }

    @Test func theSameEditOnBothSidesIsOneRevisionWithItsVectorsReconciled() async throws {
        let (server, client) = (try await TestNode.start(), try await TestNode.start())
        defer { Task { for node in [server, client] { await node.stop() } } }
        let base = try await Self.sharedDocument(server, client)
        // The identical edit on both sides: one revision ID, two versions (the server's newer).
        let onClient = try await client.request("PUT", "/db/d", json: ["v": 1, "_rev": base["_rev"]!], admin: true)
        let onServer = try await server.request("PUT", "/db/d", json: ["v": 1, "_rev": base["_rev"]!], admin: true)
        #expect(onClient.json["rev"] == onServer.json["rev"] && onClient.json["cv"] != onServer.json["cv"])
        try await Self.replicate(client, to: server, id: "same")
        let status = try await Self.status(client, "same")
        #expect(status["docs_failed_pull"]?.intValue == 0 && status["docs_failed_push"]?.intValue == 0, "\(status)")
        let (a, b) = (try await Self.document(server, "d"), try await Self.document(client, "d"))
        #expect(b["_rev"] == onClient.json["rev"] && b["_conflicts"] == nil, "still one revision: \(b)")
        #expect(a["_cv"] == b["_cv"] && a["_cv"] == onServer.json["cv"], "the newer version is current on both: \(a) \(b)")
    }

    @Test func attachmentsTravelBothWaysOverVersions() async throws {
        let server = try await TestNode.start()
        let client = try await TestNode.start()
        defer { Task { for node in [server, client] { await node.stop() } } }
        try await server.request("PUT", "/db/from-server", json: ["_attachments": ReplicationSecurityTests.attachment("pulled")], admin: true)
            .expectStatus(201)
        try await client.request("PUT", "/db/from-client", json: ["_attachments": ReplicationSecurityTests.attachment("pushed")], admin: true)
            .expectStatus(201)
        try await Self.replicate(client, to: server, id: "blobs")
        #expect(try await client.request("GET", "/db/from-server/note.txt", admin: true).text == "pulled")
        #expect(try await server.request("GET", "/db/from-client/note.txt", admin: true).text == "pushed")
    }

    @Test func namedCollectionsReplicateOverVersions() async throws {
        // Both nodes: database `db` with the collection `app.tasks` beside the default one.
        func start() async throws -> TestNode {
            let loaded = try ConfigLoader.load(text: #"{"databases": {"db": {"scopes": {"app": {"collections": {"tasks": {}}}}}}}"#)
            return try await TestNode.start { $0.databases = loaded.configuration.databases }
        }
        let (server, client) = (try await start(), try await start())
        defer { Task { for node in [server, client] { await node.stop() } } }
        #expect(try await server.request("PUT", "/db/plain", json: ["in": "default"], admin: true).status == 201)
        #expect(try await server.request("PUT", "/db.app.tasks/task", json: ["title": "t"], admin: true).status == 201)
        #expect(try await client.request("PUT", "/db.app.tasks/mine", json: ["title": "m"], admin: true).status == 201)
        let created = try await client.request("PUT", "/db/_replication/tasks", json: [
            // The admin port: a database with collections has no guest access.
            "remote": .string("ws://127.0.0.1:\(server.ports.adminPort)/db"), "versioning": "version-vectors",
            "collections": ["_default", "app.tasks"],
        ], admin: true)
        #expect(created.status == 201, "\(created.json)")
        let stopped = try await eventually(timeout: .seconds(60)) { try await Self.status(client, "tasks")["status"] == "stopped" }
        let status = try await Self.status(client, "tasks")
        #expect(stopped && status["subprotocol"] == "BLIP_3+CBMobile_4", "\(status)")
        for (path, holder) in [("/db/plain", client), ("/db.app.tasks/task", client), ("/db.app.tasks/mine", server)] {
            let copy = try await holder.request("GET", path, admin: true)
            let original = try await (holder === client ? server : client).request("GET", path, admin: true)
            #expect(copy.status == 200 && copy.json["_cv"] == original.json["_cv"], "\(path): \(copy.json) vs \(original.json)")
        }
    }

    @Test func aContinuousReplicationKeepsBothSidesInStepOverVersions() async throws {
        let (server, client) = (try await TestNode.start(), try await TestNode.start())
        defer { Task { for node in [server, client] { await node.stop() } } }
        let created = try await client.request("PUT", "/db/_replication/live", json: [
            "remote": .string("ws://127.0.0.1:\(server.ports.publicPort)/db"), "versioning": "version-vectors",
            "continuous": true,
        ], admin: true)
        #expect(created.status == 201)
        defer { Task { _ = try? await client.request("DELETE", "/db/_replication/live", admin: true) } }
        // Written on either side after the replication started: each arrives with its version.
        #expect(try await server.request("PUT", "/db/s", json: ["n": 1], admin: true).status == 201)
        #expect(try await client.request("PUT", "/db/c", json: ["n": 1], admin: true).status == 201)
        func inStep(_ id: String) async throws -> Bool {
            let (a, b) = (try await Self.document(server, id), try await Self.document(client, id))
            return a["_cv"] != nil && a["_cv"] == b["_cv"] && Self.properties(a) == Self.properties(b)
        }
        #expect(try await eventually(timeout: .seconds(30)) {
            let s = try await inStep("s")
            let c = try await inStep("c")
            return s && c
        })
        // An edit of the other side's document goes back the same way.
        let s = try await Self.document(client, "s")
        #expect(try await client.request("PUT", "/db/s", json: ["n": 2, "_rev": s["_rev"]!], admin: true).status == 201)
        #expect(try await eventually(timeout: .seconds(30)) { try await Self.document(server, "s")["n"] == 2 })
        #expect(try await eventually(timeout: .seconds(30)) { try await inStep("s") })
        let status = try await Self.status(client, "live")
        #expect(status["subprotocol"] == "BLIP_3+CBMobile_4" && status["docs_failed_push"]?.intValue == 0, "\(status)")
    }

    @Test func revisionTreesStayTheDefault() async throws {
        let server = try await TestNode.start()
        let client = try await TestNode.start()
        defer { Task { for node in [server, client] { await node.stop() } } }
        #expect(try await server.request("PUT", "/db/d", json: ["v": 0], admin: true).status == 201)
        let d = try await Self.document(server, "d")
        #expect(try await server.request("PUT", "/db/d", json: ["v": 1, "_rev": d["_rev"]!], admin: true).status == 201)
        try await Self.replicate(client, to: server, id: "trees", direction: "pull", versioning: "rev-trees")
        // Over revision trees the whole history comes: the same revision ID, generation 2.
        let (a, b) = (try await Self.document(server, "d"), try await Self.document(client, "d"))
        #expect(a["_rev"] == b["_rev"] && b["_rev"]?.stringValue?.hasPrefix("2-") == true, "\(a) \(b)")
    }
}
