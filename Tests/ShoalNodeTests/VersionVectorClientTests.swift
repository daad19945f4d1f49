import BLIP
import DocumentModel
import Foundation
import HTTPTypes
import Replication
import Testing
import TestSupport

/// Couchbase Lite 4 (`BLIP_3+CBMobile_4`, version vectors) against a node, with frames
/// built as couchbase-lite-core 4.1's Replicator sends them: `Pusher::sendChanges`
/// (`proposeChanges` rows `[docID, version, remote version?]`, `conflictIncludesRev`),
/// `Pusher::sendRevision` (`rev` = current version, `history` = the rest of the vector),
/// `Puller`/`RevFinder` (`subChanges` with `versioning: version-vectors`, `changes` rows
/// `[seq, docID, version, deleted?]`, answered with an array per wanted entry).
@Suite struct VersionVectorClientTests {
    static let client = SourceID(high: 0x0123_4567_89ab_cdef, low: 0x1122_3344_5566_7788)

    /// A version of the client's at `offset` ns after now (a real hybrid logical time).
    static func clientVersion(_ offset: UInt64) -> Version {
        Version(time: (UInt64(Date().timeIntervalSince1970 * 1e9) & ~0xffff) + offset, source: client)
    }

    /// Dials the node's public port as Couchbase Lite 4 (offering CBMobile_4 alone, as a
    /// pushing 4.x database does).
    static func asClient(
        _ node: TestNode, offering: String = "BLIP_3+CBMobile_4", _ session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        try await WebSocketDialer(extraHeaders: [.secWebSocketProtocol: offering]).dial(
            url: "ws://127.0.0.1:\(node.ports.publicPort)/db/_blipsync", username: nil, password: nil,
            heartbeat: .seconds(2), session: session)
    }

    static func proposeChanges(_ connection: BLIPConnection, _ entries: [JSON]) async throws -> JSON {
        let reply = try await connection.sendRequest(BLIPMessage(
            profile: "proposeChanges", properties: [("conflictIncludesRev", "true")], body: JSON.array(entries).canonicalBytes()))
        return try JSON.parse(reply.body)
    }

    static func rev(
        _ connection: BLIPConnection, id: String, vector: VersionVector, body: JSON, deleted: Bool = false
    ) async throws(BLIPError) {
        var properties = [("id", id), ("rev", vector.current.description), ("noconflicts", "true")]
        if let history = vector.historyText() { properties.append(("history", history)) }
        if deleted { properties.append(("deleted", "1")) }
        _ = try await connection.sendRequest(BLIPMessage(profile: "rev", properties: properties, body: body.canonicalBytes()))
    }

    /// A one-shot pull from 0 as Couchbase Lite 4's Puller (`versioning` as it sends it).
    static func pull(
        _ connection: BLIPConnection, versioning: String = "version-vectors"
    ) async throws -> (offered: [JSON], revs: [(id: String, rev: String, history: String, deleted: Bool)]) {
        try await ClientConflictTests.pull(connection, properties: [("since", "0"), ("versioning", versioning)])
    }

    static func document(_ node: TestNode, _ id: String) async throws -> JSON {
        try await node.request("GET", "/db/\(id)", admin: true).json
    }

    @Test func theHighestSubprotocolBothSpeakIsChosen() {
        #expect(BLIPWebSocket.negotiate("BLIP_3+CBMobile_4,BLIP_3+CBMobile_3") == "BLIP_3+CBMobile_4")
        #expect(BLIPWebSocket.negotiate("BLIP_3+CBMobile_3, BLIP_3+CBMobile_4") == "BLIP_3+CBMobile_4")
        #expect(BLIPWebSocket.negotiate("BLIP_3+CBMobile_3") == "BLIP_3+CBMobile_3")
        #expect(BLIPWebSocket.negotiate("BLIP_3+CBMobile_2") == "BLIP_3+CBMobile_2")
        #expect(BLIPWebSocket.negotiate("BLIP_3+CBMobile_5") == nil)
    }

    @Test func aVersionVectorClientPullsCurrentVersionsAndTheirVectors() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let written = try await node.request("PUT", "/db/local", json: ["v": 1], admin: true)
        let cv = try #require(written.json["cv"]?.stringValue)
        // A revision from a revision-tree client (Couchbase Lite 3): its legacy version.
        let legacyRev = RevID("1-" + String(repeating: "a", count: 40))!
        #expect(try await node.request(
            "PUT", "/db/legacy?new_edits=false", json: ["_rev": .string(legacyRev.description), "v": 2], admin: true).status == 201)
        try await Self.asClient(node) { connection in
            let pulled = try await Self.pull(connection)
            let offered = Dictionary(uniqueKeysWithValues: pulled.offered.map { ($0[1]!.stringValue!, $0[2]!.stringValue!) })
            #expect(offered == ["local": cv, "legacy": Version.legacy(revID: legacyRev).description], "\(pulled.offered)")
            let revs = Dictionary(uniqueKeysWithValues: pulled.revs.map { ($0.id, $0.rev) })
            #expect(revs == offered)
            // A revision-tree pull on this connection is refused as couchbase-lite-core refuses it.
            do {
                _ = try await connection.sendRequest(BLIPMessage(profile: "subChanges", properties: [("versioning", "rev-trees")]))
                Issue.record("a rev-trees subChanges was accepted on CBMobile_4")
            } catch let error as BLIPError {
                #expect(error.code == 501 && error.message == "Incompatible document versioning.")
            }
            await connection.close()
        }
        // And a version-vector pull on a revision-tree connection.
        try await Self.asClient(node, offering: "BLIP_3+CBMobile_3") { connection in
            do {
                _ = try await connection.sendRequest(BLIPMessage(profile: "subChanges", properties: [("versioning", "version-vectors")]))
                Issue.record("a version-vectors subChanges was accepted on CBMobile_3")
            } catch let error as BLIPError {
                #expect(error.code == 501)
            }
            await connection.close()
        }
    }

    @Test func aVersionVectorClientPushesEditsAndResolvesAConflictAsWithSyncGateway4() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let v1 = VersionVector(Self.clientVersion(0))
        let v2 = VersionVector(Self.clientVersion(0x10000))
        try await Self.asClient(node) { connection in
            // A new document, then an edit of it (same writer: the vector is one version).
            #expect(try await Self.proposeChanges(connection, [["d", .string(v1.current.description)]]) == [])
            try await Self.rev(connection, id: "d", vector: v1, body: ["v": "one"])
            #expect(try await Self.proposeChanges(connection, [
                ["d", .string(v2.current.description), .string(v1.current.description)],
            ]) == [])
            try await Self.rev(connection, id: "d", vector: v2, body: ["v": "two"])
            // What the node holds is what it answers 304 for.
            #expect(try await Self.proposeChanges(connection, [["d", .string(v1.current.description)]]) == [304])
            await connection.close()
        }
        let stored = try await Self.document(node, "d")
        #expect(stored["_cv"]?.stringValue == v2.current.description, "\(stored)")
        #expect(stored["v"] == "two")
        #expect(stored["_rev"]?.stringValue?.hasPrefix("2-") == true, "revision-tree readers see a revision ID: \(stored)")

        // The node's own edit (REST) makes the client's next version a conflict.
        let rev = try #require(stored["_rev"]?.stringValue)
        let serverEdit = try await node.request("PUT", "/db/d?rev=\(rev)", json: ["v": "server"], admin: true)
        let serverCV = try #require(serverEdit.json["cv"]?.stringValue)
        let clientEdit = VersionVector(Self.clientVersion(0x20000))
        let merged = try VersionVector(
            current: Self.clientVersion(0x30000), merges: [Version(parsing: serverCV), clientEdit.current])
        try await Self.asClient(node) { connection in
            let answer = try await Self.proposeChanges(connection, [
                ["d", .string(clientEdit.current.description), .string(v2.current.description)],
            ])
            #expect(answer == [["status": 409, "rev": .string(serverCV)]], "\(answer)")
            // Sent anyway: refused, nothing stored.
            do {
                try await Self.rev(connection, id: "d", vector: clientEdit, body: ["v": "client"])
                Issue.record("a conflicting version was stored")
            } catch {
                #expect((error as? BLIPError)?.code == 409, "\(error)")
            }
            // The client pulls the server's version and resolves (last writer wins, its
            // own side): a new version merging both.
            let pulled = try await Self.pull(connection)
            #expect(pulled.revs.map(\.rev) == [serverCV])
            #expect(try await Self.proposeChanges(connection, [
                ["d", .string(merged.current.description), .string(serverCV)],
            ]) == [])
            try await Self.rev(connection, id: "d", vector: merged, body: ["v": "resolved"])
            await connection.close()
        }
        let resolved = try await node.request("GET", "/db/d?conflicts=true", admin: true).json
        #expect(resolved["v"] == "resolved")
        #expect(resolved["_cv"]?.stringValue == merged.current.description)
        #expect(resolved["_conflicts"] == nil, "\(resolved)")
        #expect(resolved["_rev"]?.stringValue?.hasPrefix("4-") == true, "\(resolved)")

        // A deletion.
        let gone = VersionVector(Self.clientVersion(0x40000))
        try await Self.asClient(node) { connection in
            let current = try Version(parsing: try #require(resolved["_cv"]?.stringValue))
            #expect(try await Self.proposeChanges(connection, [["d", .string(gone.current.description), .string(current.description)]]) == [])
            let deletion = try VersionVector(current: gone.current, previous: [])
            try await Self.rev(connection, id: "d", vector: deletion, body: [:], deleted: true)
            await connection.close()
        }
        #expect(try await node.request("GET", "/db/d", admin: true).status == 404)
    }

    /// Couchbase Lite 4 sends a blob as a legacy `_attachments` stub without `revpos`
    /// (versions have no generation; `Pusher::sendRevision` with revpos 0) and serves its
    /// bytes with `getAttachment` (seen with Couchbase Lite C 4.0.3: 412 before).
    /// The same version proposed over two connections at once (`RevisionClaims` on the
    /// CBMobile_4 path): the second waits while the first sends it, then hears 304.
    @Test func aVersionProposedOverTwoConnectionsIsAskedForOnce() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let v1 = VersionVector(Self.clientVersion(0))
        let proposal: [JSON] = [["twice", .string(v1.current.description)]]
        try await Self.asClient(node) { first in
            try await Self.asClient(node) { second in
                #expect(try await Self.proposeChanges(first, proposal) == [])
                let secondAnswer = Task { try await Self.proposeChanges(second, proposal) }
                try await Task.sleep(for: .milliseconds(300))
                try await Self.rev(first, id: "twice", vector: v1, body: ["from": "first"])
                #expect(try await secondAnswer.value == [304])
                await second.close()
            }
            await first.close()
        }
        #expect(try await Self.document(node, "twice")["from"]?.stringValue == "first")
    }

    /// A document whose conflict the node resolved: the vector a Couchbase Lite 4 client
    /// pulls holds the closed branch's versions, so a client that held that branch takes
    /// the resolution as its successor, and its next edit on top is accepted (not 409).
    @Test func aResolvedBranchIsInTheVectorAClientPullsAndEditsOnTopOf() async throws {
        let node = try await TestNode.start(conflicts: .winner)
        defer { Task { await node.stop() } }
        let base = try #require(try await node.request("PUT", "/db/doc", json: ["v": "base"], admin: true).rev)
        _ = try await node.request("PUT", "/db/doc?rev=\(base)", json: ["v": "node"], admin: true)
        let baseDigest = String(base.split(separator: "-")[1])
        let branch = try await node.request("PUT", "/db/doc?new_edits=false", json: [
            "_rev": "2-ffffffffffffffffffffffffffffffffffffffff", "v": "branch",
            "_revisions": ["start": 2, "ids": ["ffffffffffffffffffffffffffffffffffffffff", .string(baseDigest)]],
        ], admin: true)
        #expect(branch.status == 201, "\(branch)")
        let resolved = await eventually {
            (try? await node.request("GET", "/db/doc?conflicts=true", admin: true).json["_conflicts"]) == nil
        }
        #expect(resolved, "the node did not resolve the conflict")
        let raw = try await node.request("GET", "/db/_raw/doc", admin: true).json["_sync"]
        let leaves = (raw?["leaves"]?.arrayValue ?? []).compactMap(\.stringValue)
        let winner = try #require(raw?["rev"]?.stringValue)
        #expect(leaves.count == 2, "a winner and the closed branch: \(leaves)")
        let closed = try #require(leaves.first { $0 != winner })
        let closedVersion = try #require(
            try await node.request("GET", "/db/doc?rev=\(closed)&show_cv=true", admin: true).json["_cv"]?.stringValue)
        let editVersion = Self.clientVersion(0x40000)

        try await Self.asClient(node, offering: "BLIP_3+CBMobile_4") { connection in
            let pulled = try await Self.pull(connection)
            let rev = try #require(pulled.revs.first { $0.id == "doc" })
            let vector = try VersionVector.parseRevMessage(rev: rev.rev, history: rev.history).vector
            #expect(vector.contains(try Version(parsing: closedVersion)), "the closed branch's version is in \(rev)")
            // An edit on top of what it pulled continues the node's winner.
            let edit = try vector.addingLocalEdit(source: Self.client, time: editVersion.time)
            #expect(try await Self.proposeChanges(connection, [
                ["doc", .string(edit.current.description), .string(vector.current.description)],
            ]) == [])
            try await Self.rev(connection, id: "doc", vector: edit, body: ["v": "client"])
            await connection.close()
        }
        let stored = try await Self.document(node, "doc")
        #expect(stored["v"]?.stringValue == "client")
        #expect(stored["_cv"]?.stringValue == editVersion.description)
        #expect(try await node.request("GET", "/db/doc?conflicts=true", admin: true).json["_conflicts"] == nil)
    }

    @Test func anAttachmentStubWithoutRevposIsFetchedAndStored() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let bytes = Array("a photo's bytes".utf8)
        let digest = "sha1-" + Data(SHA1.hash(bytes)).base64EncodedString()
        let version = VersionVector(Self.clientVersion(0))
        try await Self.asClient(node) { connection in
            connection.setHandler(for: "getAttachment") { message in
                #expect(message["digest"] == digest)
                return BLIPMessage(body: bytes)
            }
            let blob: JSON = ["@type": "blob", "digest": .string(digest), "length": .int(Int64(bytes.count)), "content_type": "image/jpeg"]
            try await Self.rev(connection, id: "photo", vector: version, body: [
                "photo": blob,
                "_attachments": ["blob_/photo": [
                    "stub": true, "digest": .string(digest), "length": .int(Int64(bytes.count)), "content_type": "image/jpeg",
                ]],
            ])
            await connection.close()
        }
        let attachment = try await node.request("GET", "/db/photo/blob_%2Fphoto", admin: true)
        #expect(attachment.status == 200, "\(attachment)")
        #expect(attachment.body == bytes)
    }

    /// A client whose clock is an hour ahead: its version is kept as sent, but the node's
    /// own clock moves at most `HybridLogicalClock.maxSkew` (2 minutes) past the wall
    /// time, so the node's next version is not an hour ahead.
    @Test func aClientFarAheadCannotPushTheNodesClockPastTheBound() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let hour: UInt64 = 3600 * 1_000_000_000
        let ahead = VersionVector(Self.clientVersion(hour))
        try await Self.asClient(node) { connection in
            try await Self.rev(connection, id: "future", vector: ahead, body: ["from": "the future"])
            await connection.close()
        }
        #expect(try await Self.document(node, "future")["_cv"]?.stringValue == ahead.current.description)
        let wall = UInt64(Date().timeIntervalSince1970 * 1e9)
        let written = try await node.request("PUT", "/db/now", json: ["n": 1], admin: true)
        let version = try Version(parsing: try #require(written.json["cv"]?.stringValue))
        #expect(version.time < wall + HybridLogicalClock.maxSkew + 10 * 1_000_000_000, "\(version) vs wall \(wall)")
        #expect(version.time < ahead.current.time)
    }

    @Test func aRevisionTreeClientSeesTheSameDocumentsByRevisionID() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let version = VersionVector(Self.clientVersion(0))
        try await Self.asClient(node) { connection in
            try await Self.rev(connection, id: "shared", vector: version, body: ["from": "cbl4"])
            await connection.close()
        }
        let stored = try await Self.document(node, "shared")
        let revID = try #require(stored["_rev"]?.stringValue)
        try await Self.asClient(node, offering: "BLIP_3+CBMobile_3") { connection in
            let pulled = try await Self.pull(connection, versioning: "rev-trees")
            #expect(pulled.revs.map(\.rev) == [revID])
            await connection.close()
        }
    }

    @Test func aMalformedOrContradictoryVectorIsRefusedNamingTheDocument() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let newer = Self.clientVersion(0x10000)
        let other = Version(time: newer.time + 0x50000, source: SourceID(high: 9, low: 9))
        let cases: [(rev: String, history: String?, why: String)] = [
            ("nothex@\(Self.client)", nil, "unparseable"),
            (newer.description, "\(Version(time: newer.time - 1, source: Self.client))", "the same source twice"),
            (newer.description, other.description, "a current version older than a previous one"),
        ]
        try await Self.asClient(node) { connection in
            for (index, item) in cases.enumerated() {
                var properties = [("id", "bad\(index)"), ("rev", item.rev)]
                if let history = item.history { properties.append(("history", history)) }
                do {
                    _ = try await connection.sendRequest(BLIPMessage(profile: "rev", properties: properties, body: Array("{}".utf8)))
                    Issue.record("\(item.why) was accepted")
                } catch let error as BLIPError {
                    #expect(error.code == 400, "\(item.why): \(error)")
                    #expect(error.message.contains("'bad\(index)'"), "\(item.why): \(error.message)")
                }
            }
            let proposal = try? await Self.proposeChanges(connection, [["bad", "zz@@"]])
            #expect(proposal == nil, "a malformed proposeChanges entry was answered")
            await connection.close()
        }
        for index in cases.indices {
            #expect(try await node.request("GET", "/db/bad\(index)", admin: true).status == 404)
        }
    }

    @Test func meshLinksCarryVersionsSoEveryNodeShowsTheSameOnes() async throws {
        let b = try await TestNode.start()
        let a = try await TestNode.start { configuration in
            configuration.heartbeat = .milliseconds(500)
            configuration.peers = ["ws://127.0.0.1:\(b.ports.publicPort)/db"]
        }
        defer { Task { for node in [a, b] { await node.stop() } } }
        // A local write on A, and a Couchbase Lite 4 client's write on B.
        let local = try await a.request("PUT", "/db/fromA", json: ["v": 1])
        let version = VersionVector(Self.clientVersion(0))
        try await Self.asClient(b) { connection in
            try await Self.rev(connection, id: "fromClient", vector: version, body: ["v": 2])
            await connection.close()
        }
        let same = try await eventually(timeout: .seconds(30)) {
            for id in ["fromA", "fromClient"] {
                let onA = try await Self.document(a, id)
                let onB = try await Self.document(b, id)
                guard onA["_rev"] != nil, onA["_rev"] == onB["_rev"], onA["_cv"] == onB["_cv"] else { return false }
            }
            return true
        }
        #expect(same, "the nodes differ")
        #expect(try await Self.document(b, "fromA")["_cv"]?.stringValue == local.json["cv"]?.stringValue)
        #expect(try await Self.document(a, "fromClient")["_cv"]?.stringValue == version.current.description)
    }
}
