import BLIP
import DocumentModel
import Foundation
import Replication
import Synchronization
import Testing
import TestSupport

/// Security over BLIP: a replication that authenticates as a user pulls only that
/// user's channels and writes through the sync function as that user; mesh links
/// need the mesh secret when the database has one.
@Suite struct ReplicationSecurityTests {
    /// A node whose `db` has user1 (channels pub, u1) and a sync function that routes by
    /// `channels` and only lets a user write documents it owns.
    static func secured(meshSecret: String? = nil, peers: [String] = []) async throws -> TestNode {
        try await TestNode.start { configuration in
            configuration.passwordIterations = 1000
            configuration.heartbeat = .milliseconds(500)
            configuration.peers = peers
            configuration.databases[0].meshSecret = meshSecret
            configuration.databases[0].sync = """
                function(doc, oldDoc) {
                  if (doc.owner) requireUser(doc.owner);
                  channel(doc.channels);
                }
                """
            configuration.databases[0].users = ["user1": ["password": "pass", "admin_channels": ["pub", "u1"]]]
        }
    }

    func ids(_ node: TestNode) async throws -> [String] {
        try await node.request("GET", "/db/_all_docs", admin: true).json["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
    }

    func status(_ node: TestNode, _ id: String) async throws -> JSON {
        try await node.request("GET", "/db/_replicationStatus/\(id)", admin: true).json
    }

    @Test func userPullGetsOnlyItsChannelsAndPushIsChecked() async throws {
        let server = try await Self.secured()
        let client = try await TestNode.start()
        defer { Task { for node in [server, client] { await node.stop() } } }
        for (id, channels) in [("d1", ["u1"]), ("d2", ["u2"]), ("d3", ["pub"]), ("d4", ["u2", "pub"])] {
            #expect(try await server.request("PUT", "/db/\(id)", json: ["channels": .array(channels.map { .string($0) })], admin: true).status == 201)
        }
        let remote = "ws://127.0.0.1:\(server.ports.publicPort)/db"
        let pull = try await client.request("PUT", "/db/_replication/pull", json: [
            "remote": .string(remote), "direction": "pull", "remote_username": "user1", "remote_password": "pass",
        ], admin: true)
        #expect(pull.status == 201)
        #expect(try await eventually { try await status(client, "pull")["status"] == "stopped" })
        #expect(try await ids(client) == ["d1", "d3", "d4"])

        // A channel filter narrows the pull further.
        let filtered = try await TestNode.start()
        defer { Task { await filtered.stop() } }
        _ = try await filtered.request("PUT", "/db/_replication/pull", json: [
            "remote": .string(remote), "direction": "pull", "remote_username": "user1", "remote_password": "pass",
            "filter": "sync_gateway/bychannel", "query_params": ["channels": ["pub"]],
        ], admin: true)
        #expect(try await eventually { try await status(filtered, "pull")["status"] == "stopped" })
        #expect(try await ids(filtered) == ["d3", "d4"])

        // Pushing as user1: the server's sync function sees user1 as the writer.
        _ = try await client.request("PUT", "/db/mine", json: ["owner": "user1", "channels": ["u1"]])
        _ = try await client.request("PUT", "/db/theirs", json: ["owner": "user2", "channels": ["u2"]])
        _ = try await client.request("PUT", "/db/_replication/push", json: [
            "remote": .string(remote), "direction": "push", "remote_username": "user1", "remote_password": "pass",
        ], admin: true)
        #expect(try await eventually { try await status(client, "push")["status"] == "stopped" })
        let serverDocs = try await ids(server)
        #expect(serverDocs.contains("mine"))
        #expect(!serverDocs.contains("theirs"), "a revision the sync function rejects is stored nowhere")
        #expect(try await status(client, "push")["docs_failed_push"]?.intValue ?? 0 >= 1)
    }

    @Test func wrongCredentialsAreReported() async throws {
        let server = try await Self.secured()
        let client = try await TestNode.start()
        defer { Task { for node in [server, client] { await node.stop() } } }
        _ = try await client.request("PUT", "/db/_replication/bad", json: [
            "remote": .string("ws://127.0.0.1:\(server.ports.publicPort)/db"), "direction": "pull",
            "remote_username": "user1", "remote_password": "wrong",
        ], admin: true)
        let reported = try await eventually {
            let current = try await status(client, "bad")
            return current["status"] == "error" && current["error_message"]?.stringValue?.contains("401") == true
        }
        let final = try await status(client, "bad")
        #expect(reported, "\(final)")
    }

    @Test func meshLinksNeedTheSecret() async throws {
        let a = try await Self.secured(meshSecret: "correct horse battery")
        let withSecret = try await Self.secured(meshSecret: "correct horse battery", peers: ["ws://127.0.0.1:\(a.ports.publicPort)/db"])
        let wrongSecret = try await Self.secured(meshSecret: "another secret!", peers: ["ws://127.0.0.1:\(a.ports.publicPort)/db"])
        defer { Task { for node in [a, withSecret, wrongSecret] { await node.stop() } } }
        _ = try await withSecret.request("PUT", "/db/from-member", json: ["channels": ["u1"]], admin: true)
        _ = try await wrongSecret.request("PUT", "/db/from-outsider", json: ["channels": ["u1"]], admin: true)
        _ = try await a.request("PUT", "/db/from-a", json: ["channels": ["u2"]], admin: true)
        // The member replicates everything both ways, as the mesh principal.
        #expect(try await eventually {
            let (member, hub) = (try await ids(withSecret), try await ids(a))
            return member.contains("from-a") && hub.contains("from-member")
        })
        // The outsider is refused with 401, and nothing crosses.
        let refused = try await eventually {
            let peers = try await wrongSecret.request("GET", "/db/_peers", admin: true).json["peers"]?.arrayValue ?? []
            return peers.contains { $0["last_error"]?.stringValue?.contains("401") == true }
        }
        let peers = try await wrongSecret.request("GET", "/db/_peers", admin: true).json
        #expect(refused, "\(peers)")
        #expect(try await !ids(a).contains("from-outsider"))
        #expect(try await !ids(wrongSecret).contains("from-a"))
    }

    /// Attachments follow their documents: a user pulls those of its documents, and a
    /// `getAttachment` for a document outside its channels (or naming none) is refused.
    /// An `_attachments` object with one inline text attachment, `note.txt`.
    static func attachment(_ text: String) -> JSON {
        ["note.txt": ["content_type": "text/plain", "data": .string(Data(text.utf8).base64EncodedString())]]
    }

    @Test func attachmentsFollowTheirDocuments() async throws {
        let server = try await Self.secured()
        let client = try await TestNode.start()
        defer { Task { for node in [server, client] { await node.stop() } } }
        // (In loaded suite runs the pulled document was once missing: the server's 500 ms
        // heartbeat closed the slow client with 1001, which ended the one-shot pull as if
        // done. Fixed; `CutShortTests` reproduces it.)
        try await server.request("PUT", "/db/mine", json: ["channels": ["u1"], "_attachments": Self.attachment("for user1")], admin: true)
            .expectStatus(201)
        try await server.request("PUT", "/db/secret", json: ["channels": ["u2"], "_attachments": Self.attachment("not for user1")], admin: true)
            .expectStatus(201)
        let secretDigest = try #require(try await server.request("GET", "/db/secret", admin: true).json["_attachments"]?["note.txt"]?["digest"]?.stringValue)
        _ = try await client.request("PUT", "/db/_replication/pull", json: [
            "remote": .string("ws://127.0.0.1:\(server.ports.publicPort)/db"), "direction": "pull",
            "remote_username": "user1", "remote_password": "pass",
        ], admin: true)
        #expect(try await eventually { try await status(client, "pull")["status"] == "stopped" })
        let pulled = try await client.request("GET", "/db/mine/note.txt", admin: true)
        let pullStatus = try await status(client, "pull")
        #expect(pulled.text == "for user1", "\(pulled); pull status: \(pullStatus)")

        // Asking directly, as user1, for the other document's attachment.
        let answers = Mutex<[String]>([])
        try await WebSocketDialer().dial(
            url: "ws://127.0.0.1:\(server.ports.publicPort)/db/_blipsync", username: "user1", password: "pass",
            heartbeat: .seconds(2)
        ) { connection in
            for docID in ["secret", nil, "mine"] as [String?] {
                var properties = [("Profile", "getAttachment"), ("digest", secretDigest)]
                if let docID { properties.append(("docID", docID)) }
                do {
                    let reply = try await connection.sendRequest(BLIPMessage(properties: properties))
                    answers.withLock { $0.append("ok \(reply.body.count)") }
                } catch {
                    answers.withLock { $0.append("\(error)") }
                }
            }
            await connection.close()
        }
        let results = answers.withLock { $0 }
        #expect(results.count == 3)
        #expect(results.allSatisfy { $0.contains("403") }, "\(results)")
    }
}
