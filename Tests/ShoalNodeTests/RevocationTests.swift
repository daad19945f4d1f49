import DocumentModel
import Foundation
import Testing
import TestSupport

/// Revocation over BLIP, as Sync Gateway 3 sends it: a user's pull is told which
/// documents left the user's channels and, while connected, which it lost access to;
/// a puller with `purge_on_removal` purges its copies, one without keeps them.
@Suite struct RevocationTests {
    /// A node where `reader` reads channel `x` and whatever `grant` documents give it.
    static func server() async throws -> TestNode {
        try await TestNode.start { configuration in
            configuration.passwordIterations = 1000
            configuration.heartbeat = .milliseconds(500)
            configuration.databases[0].sync = """
                function(doc, oldDoc) {
                  channel(doc.channels);
                  if (doc.type == "grant") access(doc.user, doc.grants);
                }
                """
            configuration.databases[0].users = ["reader": ["password": "pass", "admin_channels": ["x", "w"]]]
        }
    }

    /// Creates or updates (as the admin) document `id` of `server`.
    static func put(_ server: TestNode, _ id: String, _ body: JSON) async throws {
        let current = try await server.request("GET", "/db/\(id)", admin: true)
        var object = body.objectValue ?? [:]
        if current.status == 200, let rev = current.json["_rev"] { object["_rev"] = rev }
        #expect(try await server.request("PUT", "/db/\(id)", json: .object(object), admin: true).status == 201)
    }

    func ids(_ node: TestNode) async throws -> Set<String> {
        Set(try await node.request("GET", "/db/_all_docs", admin: true).json["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [])
    }

    @Test func removedAndRevokedDocumentsArePurgedOnlyWhenAsked() async throws {
        let server = try await Self.server()
        let purging = try await TestNode.start()
        let keeping = try await TestNode.start()
        defer { Task { for node in [server, purging, keeping] { await node.stop() } } }
        func put(_ id: String, _ body: JSON) async throws { try await Self.put(server, id, body) }
        try await put("a", ["channels": ["x"]])
        try await put("b", ["channels": ["x"]])
        try await put("c", ["channels": ["y"]])
        try await put("d", ["channels": ["y", "x"]])
        try await put("grant", ["type": "grant", "user": "reader", "grants": ["y"], "channels": ["x"]])
        try await put("hidden", ["channels": ["z"]])

        let remote = "ws://127.0.0.1:\(server.ports.publicPort)/db"
        for (node, purge) in [(purging, true), (keeping, false)] {
            let response = try await node.request("PUT", "/db/_replication/pull", json: [
                "remote": .string(remote), "direction": "pull", "continuous": true,
                "remote_username": "reader", "remote_password": "pass", "purge_on_removal": .bool(purge),
            ], admin: true)
            #expect(response.status == 201)
        }
        let everything: Set = ["a", "b", "c", "d", "grant"]
        #expect(try await eventually {
            let (p, k) = (try await ids(purging), try await ids(keeping))
            return p == everything && k == everything
        })

        // b leaves x (removal, flag 4); the grant of y is revoked (c is in y only; d
        // stays readable through x).
        try await put("b", ["channels": ["z"]])
        try await put("grant", ["type": "grant", "user": "reader", "grants": [], "channels": ["x"]])
        let purged = try await eventually { try await ids(purging) == ["a", "d", "grant"] }
        let left = try await ids(purging)
        #expect(purged, "\(left)")
        let status = try await purging.request("GET", "/db/_replicationStatus/pull", admin: true).json
        #expect(status["docs_purged"] == 2, "\(status)")

        // The node without purge_on_removal keeps its copies (b at the revision it had).
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await ids(keeping) == everything)
        #expect(try await keeping.request("GET", "/db/b", admin: true).json["channels"] == ["x"])

        // A document given back is pulled again.
        try await put("c", ["channels": ["x"]])
        #expect(try await eventually { try await ids(purging).contains("c") })
    }

    /// Access lost while the puller was away (a revoked grant, an admin channel taken
    /// from the user, a role taken away) is announced when it pulls again from its
    /// checkpoint.
    @Test func accessLostWhileAwayIsAnnouncedOnTheNextPull() async throws {
        let server = try await Self.server()
        let target = try await TestNode.start()
        defer { Task { for node in [server, target] { await node.stop() } } }
        func put(_ id: String, _ body: JSON) async throws { try await Self.put(server, id, body) }
        #expect(try await server.request("PUT", "/db/_role/team", json: ["admin_channels": ["t"]], admin: true).status == 201)
        #expect(try await server.request("PUT", "/db/_user/reader", json: ["admin_roles": ["team"]], admin: true).status == 200)
        try await put("a", ["channels": ["x"]])
        try await put("e", ["channels": ["w"]])
        try await put("c", ["channels": ["y"]])
        try await put("t1", ["channels": ["t"]])
        try await put("grant", ["type": "grant", "user": "reader", "grants": ["y"], "channels": ["x"]])
        let remote = "ws://127.0.0.1:\(server.ports.publicPort)/db"
        func pull(_ id: String) async throws -> JSON {
            let response = try await target.request("PUT", "/db/_replication/\(id)", json: [
                "remote": .string(remote), "direction": "pull",
                "remote_username": "reader", "remote_password": "pass", "purge_on_removal": true,
            ], admin: true)
            #expect(response.status == 201)
            var status: JSON = .null
            _ = try await eventually {
                status = try await target.request("GET", "/db/_replicationStatus/\(id)", admin: true).json
                return status["status"] == "stopped"
            }
            return status
        }
        _ = try await pull("first")
        #expect(try await ids(target) == ["a", "e", "c", "t1", "grant"])

        // While the target is away: the grant of y is revoked, w is taken from the
        // user, and so is the role team (channel t).
        try await put("grant", ["type": "grant", "user": "reader", "grants": [], "channels": ["x"]])
        #expect(try await server.request("PUT", "/db/_user/reader", json: ["admin_channels": ["x"], "admin_roles": []], admin: true).status == 200)
        try await put("f", ["channels": ["x"]])
        let second = try await pull("second")
        #expect(try await ids(target) == ["a", "f", "grant"], "\(second)")
        #expect(second["docs_purged"] == 3, "\(second)")
    }
}
