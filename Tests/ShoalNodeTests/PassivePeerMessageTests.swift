import BLIP
import DocumentModel
import Foundation
import Replication
import Synchronization
import Testing
import TestSupport

/// Requests as couchbase-lite-core's replicator sends them to a passive peer, built by
/// hand from its sources (`Puller::_start`, `Pusher::sendChanges`, `Replicator::getCollections`),
/// and the answers it acts on (Sources/Replication/Replication.md, "Couchbase Lite's
/// replicator, message by message").
@Suite struct PassivePeerMessageTests {
    /// Couchbase Lite 3.1+'s `subChanges`: `versioning` names its document model. A
    /// revision-tree puller is served; a version-vector one is refused, as Couchbase Lite's
    /// own passive Pusher refuses it.
    @Test func subChangesVersioning() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        #expect(try await node.request("PUT", "/db/doc", json: ["a": 1], admin: true).status == 201)
        try await ClientConflictTests.asClient(node) { connection in
            do {
                _ = try await connection.sendRequest(BLIPMessage(
                    profile: "subChanges", properties: [("versioning", "version-vectors"), ("batch", "200")]))
                Issue.record("a version-vector pull was served")
            } catch let error as BLIPError {
                #expect(error.domain == "HTTP" && error.code == 501, "\(error)")
                #expect(error.message == "Incompatible document versioning.")
            }
            let pulled = try await ClientConflictTests.pull(connection, properties: [
                ("since", "0"), ("batch", "200"), ("sendReplacementRevs", "true"), ("versioning", "rev-trees"),
                ("activeOnly", "true"), ("revocations", "true"),
            ])
            #expect(pulled.revs.map(\.id) == ["doc"])
            await connection.close()
        }
    }

    /// `activeOnly` (Couchbase Lite's first pull into an empty database) leaves out the
    /// documents deleted before the feed started, never a deletion made while it runs:
    /// a continuous pull that started empty must still hear of later deletions (Sync
    /// Gateway sends them once the client caught up), or the client keeps the document
    /// for good, its checkpoint already past the tombstone.
    @Test(arguments: [false, true])
    func activeOnlyLeavesOutOnlyWhatWasDeletedBeforeTheFeed(asUser: Bool) async throws {
        let node = try await TestNode.start { configuration in
            configuration.passwordIterations = 1000
            configuration.databases[0].users = ["reader": ["password": "pass", "admin_channels": ["c"]]]
        }
        defer { Task { await node.stop() } }
        for id in ["live", "gone", "later"] {
            #expect(try await node.request("PUT", "/db/\(id)", json: ["channels": ["c"]], admin: true).status == 201)
        }
        /// A tombstone that stays in channel `c` (the user's feed reads it by channel).
        @Sendable func delete(_ id: String) async throws -> Int {
            let rev = try await node.request("GET", "/db/\(id)", admin: true).json["_rev"]?.stringValue ?? ""
            return try await node.request("PUT", "/db/\(id)?rev=\(rev)", json: ["_deleted": true, "channels": ["c"]], admin: true).status
        }
        #expect(try await delete("gone") == 201)
        let revs = Mutex<[(id: String, deleted: Bool)]>([])
        let session: @Sendable (BLIPConnection) async throws -> Void = { connection in
            connection.setHandler(for: "changes", serial: true) { message in
                let entries = (try? JSON.parse(message.body))?.arrayValue ?? []
                return BLIPMessage(body: JSON.array(entries.map { _ in [] }).canonicalBytes())
            }
            connection.setHandler(for: "rev") { message in
                revs.withLock { $0.append((message["id"] ?? "", message["deleted"] == "1")) }
                return BLIPMessage()
            }
            _ = try await connection.sendRequest(BLIPMessage(profile: "subChanges", properties: [
                ("since", "0"), ("continuous", "true"), ("activeOnly", "true"), ("batch", "200"),
            ]))
            let first = await eventually { Set(revs.withLock { $0.map(\.id) }) == ["live", "later"] }
            #expect(first, "the live documents, and not the one deleted before: \(revs.withLock { $0 })")
            #expect(try await delete("later") == 201)
            let deletion = await eventually { revs.withLock { $0.contains { $0.id == "later" && $0.deleted } } }
            #expect(deletion, "a deletion made during the feed was not sent: \(revs.withLock { $0 })")
            #expect(!revs.withLock { $0.contains { $0.id == "gone" } })
            await connection.close()
        }
        // As the user (its channels' feed), or on the admin port (the whole feed).
        try await WebSocketDialer().dial(
            url: "ws://127.0.0.1:\(asUser ? node.ports.publicPort : node.ports.adminPort)/db/_blipsync",
            username: asUser ? "reader" : nil, password: asUser ? "pass" : nil, heartbeat: .seconds(2), session: session)
    }

    /// A request for a profile we do not serve gets ERR BLIP/404 with Sync Gateway's
    /// message, which Couchbase Lite recognizes (on `getCollections`, from a server
    /// without named collections: "does not support named collections").
    @Test func unknownProfileIsAnsweredAsSyncGatewayDoes() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        try await ClientConflictTests.asClient(node) { connection in
            do {
                _ = try await connection.sendRequest(BLIPMessage(profile: "getTheMoon", body: Array("{}".utf8)))
                Issue.record("an unknown profile was answered")
            } catch let error as BLIPError {
                #expect(error == BLIPError(code: 404, message: "No handler for BLIP request"))
            }
            // getCollections is served; a database without named collections has only `_default`.
            let body: JSON = ["checkpoint_ids": ["cp-abc", "cp-def"], "collections": ["_default.lists", "_default._default"]]
            let reply = try await connection.sendRequest(BLIPMessage(profile: "getCollections", body: body.canonicalBytes()))
            #expect(reply.bodyString == "[null,{}]")
            await connection.close()
        }
    }

    /// A user's pushed revision naming an attachment we already hold (of a document it
    /// cannot read) is stored only if the user proves it has the bytes
    /// (`proveAttachment`: SHA-1 of nonce length, nonce, data), as the protocol asks of
    /// a server with per-document access; otherwise naming a digest would be a way to
    /// read any attachment.
    @Test func knownAttachmentsMustBeProven() async throws {
        let node = try await TestNode.start { configuration in
            configuration.passwordIterations = 1000
            configuration.databases[0].users = ["thief": ["password": "pass", "admin_channels": ["thief"]]]
        }
        defer { Task { await node.stop() } }
        let secret = Array("the secret attachment".utf8)
        let digest = Digests.attachmentDigest(of: secret)
        let stored = try await node.request("PUT", "/db/secret", json: [
            "channels": ["vault"],
            "_attachments": ["a.txt": ["content_type": "text/plain", "data": .string(Data(secret).base64EncodedString())]],
        ], admin: true)
        #expect(stored.status == 201, "\(stored)")

        func push(_ docID: String, proof: @escaping @Sendable ([UInt8]) -> [UInt8]) async throws -> BLIPError? {
            let outcome = Mutex<BLIPError?>(nil)
            try await WebSocketDialer(extraHeaders: [:]).dial(
                url: "ws://127.0.0.1:\(node.ports.publicPort)/db/_blipsync", username: "thief", password: "pass",
                heartbeat: .seconds(2)
            ) { connection in
                connection.setHandler(for: "proveAttachment") { message in
                    #expect(message["digest"] == digest)
                    return BLIPMessage(body: proof(message.body))
                }
                let body: JSON = [
                    "channels": ["thief"],
                    "_attachments": ["a.txt": [
                        "content_type": "text/plain", "digest": .string(digest), "length": .int(Int64(secret.count)),
                        "revpos": 1, "stub": true,
                    ]],
                ]
                do {
                    _ = try await connection.sendRequest(BLIPMessage(
                        profile: "rev", properties: [("id", docID), ("rev", "1-abc1")], body: body.canonicalBytes()))
                } catch let error as BLIPError {
                    outcome.withLock { $0 = error }
                }
                await connection.close()
            }
            return outcome.withLock { $0 }
        }

        // Knowing only the digest: the proof is wrong, the revision refused.
        let refused = try await push("stolen") { _ in Array("sha1-guessed".utf8) }
        #expect(refused?.domain == "HTTP" && refused?.code == 403, "\(String(describing: refused))")
        try await node.request("GET", "/db/stolen/a.txt", headers: TestNode.basic("thief", "pass")).expectStatus(404)
        // A client that has the bytes proves it (as couchbase-lite-core's Pusher computes it).
        let accepted = try await push("mine") { nonce in
            Array(Digests.attachmentDigest(of: [UInt8(nonce.count)] + nonce + secret).utf8)
        }
        #expect(accepted == nil, "\(String(describing: accepted))")
        #expect(try await node.request("GET", "/db/mine/a.txt", headers: TestNode.basic("thief", "pass")).body == secret)
    }
}

