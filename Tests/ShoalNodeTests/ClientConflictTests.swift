import BLIP
import DocumentModel
import Foundation
import Replication
import Synchronization
import Testing
import TestSupport

/// Couchbase Lite clients expect Sync Gateway's no-conflicts mode: a pushed revision
/// that would start a branch is refused with 409 (in the `proposeChanges` answer, and
/// as the `rev`'s error), the client pulls the server's revision, resolves locally and
/// pushes a child of it; and a client is offered only winning revisions, never a
/// tombstone that resolved a losing branch. The client here speaks BLIP as
/// couchbase-lite-core's Pusher and Puller do, without Shoal's replicator header.
@Suite struct ClientConflictTests {
    static let clientEdit = RevID("2-" + String(repeating: "c", count: 40))!
    static let resolved = RevID("3-" + String(repeating: "e", count: 40))!

    /// Dials the node's public port like Couchbase Lite (no `X-Shoal-Replicator`).
    static func asClient(_ node: TestNode, _ session: @escaping @Sendable (BLIPConnection) async throws -> Void) async throws {
        try await WebSocketDialer(extraHeaders: [:]).dial(
            url: "ws://127.0.0.1:\(node.ports.publicPort)/db/_blipsync", username: nil, password: nil,
            heartbeat: .seconds(2), session: session)
    }

    static func proposeChanges(_ connection: BLIPConnection, _ entries: [JSON]) async throws -> JSON {
        let reply = try await connection.sendRequest(BLIPMessage(profile: "proposeChanges", body: JSON.array(entries).canonicalBytes()))
        return try JSON.parse(reply.body)
    }

    static func rev(_ connection: BLIPConnection, id: String, rev: RevID, history: [RevID], body: JSON) async throws {
        _ = try await connection.sendRequest(BLIPMessage(
            profile: "rev",
            properties: [("id", id), ("rev", rev.description), ("history", history.map(\.description).joined(separator: ","))],
            body: body.canonicalBytes()))
    }

    /// A one-shot pull from 0: every `changes` entry offered, and the `rev`s received.
    static func pull(
        _ connection: BLIPConnection, properties: [(String, String)] = [("since", "0")]
    ) async throws -> (offered: [JSON], revs: [(id: String, rev: String, history: String, deleted: Bool)]) {
        let offered = Mutex<[JSON]>([])
        let revs = Mutex<[(id: String, rev: String, history: String, deleted: Bool)]>([])
        let caughtUp = Mutex(false)
        connection.setHandler(for: "changes", serial: true) { message in
            let entries = (try? JSON.parse(message.body))?.arrayValue ?? []
            if entries.isEmpty { caughtUp.withLock { $0 = true } }
            offered.withLock { $0 += entries }
            // Want everything, knowing no ancestor.
            return BLIPMessage(body: JSON.array(entries.map { _ in [] }).canonicalBytes())
        }
        connection.setHandler(for: "rev") { message in
            revs.withLock {
                $0.append((message["id"] ?? "", message["rev"] ?? "", message["history"] ?? "", message["deleted"] == "1"))
            }
            return BLIPMessage()
        }
        _ = try await connection.sendRequest(BLIPMessage(profile: "subChanges", properties: properties))
        let done = await eventually {
            caughtUp.withLock { $0 } && revs.withLock { $0.count } == offered.withLock { $0.count }
        }
        #expect(done, "the pull did not finish")
        return (offered.withLock { $0 }, revs.withLock { $0 })
    }

    @Test func aClientBranchIsRefusedAndResolvedByTheClient() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let created = try await node.request("PUT", "/db/d", json: ["v": "base"], admin: true)
        let base = try #require(created.rev.flatMap(RevID.init))
        // The client has pulled `base`; the server edits it, the client too (offline).
        let server = try #require(try await node.request("PUT", "/db/d?rev=\(base)", json: ["v": "server"], admin: true).rev.flatMap(RevID.init))

        try await Self.asClient(node) { connection in
            // proposeChanges: [docID, revID, the client's remote ancestor]: 409 for the
            // branch, 0 for a new document, 304 for a revision we have.
            let answers = try await Self.proposeChanges(connection, [
                ["d", .string(Self.clientEdit.description), .string(base.description)],
                ["new", "1-abcd"],
                ["d", .string(server.description), .string(base.description)],
            ])
            #expect(answers == [409, 0, 304])
            // Couchbase Lite 3 asks for our current revision with the 409.
            let detailed = try await connection.sendRequest(BLIPMessage(
                profile: "proposeChanges", properties: [("conflictIncludesRev", "true")],
                body: JSON.array([["d", .string(Self.clientEdit.description), .string(base.description)]]).canonicalBytes()))
            #expect(try JSON.parse(detailed.body) == [["status": 409, "rev": .string(server.description)]])
            // `changes` (a pusher that allows outgoing conflicts tries it first): refused
            // with HTTP/409, on which Couchbase Lite's Pusher switches to proposeChanges.
            do {
                _ = try await connection.sendRequest(BLIPMessage(
                    profile: "changes",
                    body: JSON.array([[1, "d", .string(Self.clientEdit.description)]]).canonicalBytes()))
                Issue.record("a client's changes was answered")
            } catch let error as BLIPError {
                #expect(error.domain == "HTTP" && error.code == 409, "\(error)")
                #expect(error.message == "Use 'proposeChanges' instead")
            }
            // The same revision sent as a `rev` anyway: 409.
            do {
                try await Self.rev(connection, id: "d", rev: Self.clientEdit, history: [base], body: ["v": "client"])
                Issue.record("a branching rev was accepted")
            } catch let error as BLIPError {
                #expect(error.code == 409, "\(error)")
            }

            // The client pulls the server's revision and resolves: a child of it.
            let pulled = try await Self.pull(connection)
            #expect(pulled.revs.map(\.rev) == [server.description])
            #expect(pulled.revs.first?.history == base.description)
            let proposal = try await Self.proposeChanges(connection, [["d", .string(Self.resolved.description), .string(server.description)]])
            #expect(proposal == [])
            try await Self.rev(connection, id: "d", rev: Self.resolved, history: [server, base], body: ["v": "merged"])
            await connection.close()
        }
        // Both sides end on the same live document, with no conflict on the server.
        let document = try await node.request("GET", "/db/d?conflicts=true", admin: true)
        #expect(document.json["_rev"]?.stringValue == Self.resolved.description, "\(document)")
        #expect(document.json["v"] == "merged")
        #expect(document.json["_conflicts"] == nil, "\(document)")
        #expect(try await node.request("GET", "/db/d?open_revs=all", admin: true, headers: ["Accept": "application/json"]).json.arrayValue?.count == 1)
    }

    /// A conflict made in the mesh and resolved there (`winner` tombstones the losing
    /// branch): a client that holds the losing revision is offered the winner only, so
    /// its live document is never turned into a deletion.
    @Test func clientsAreOfferedWinnersOnly() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        for (rev, ids, value) in [("2-aaaa", ["aaaa", "1111"], "a"), ("2-bbbb", ["bbbb", "1111"], "b")] {
            let put = try await node.request("PUT", "/db/e?new_edits=false", json: [
                "_rev": .string(rev), "_revisions": ["start": 2, "ids": .array(ids.map { .string($0) })], "v": .string(value),
            ], admin: true)
            #expect(put.status == 201, "\(put)")
        }
        // The node resolves it (default policy `winner`: 2-bbbb wins, 2-aaaa gets a tombstone).
        let resolved = try await eventually {
            let leaves = try await node.request("GET", "/db/e?open_revs=all", admin: true, headers: ["Accept": "application/json"])
            let current = try await node.request("GET", "/db/e?conflicts=true", admin: true)
            return leaves.json.arrayValue?.count == 2 && current.json["_conflicts"] == nil
        }
        #expect(resolved)
        try await Self.asClient(node) { connection in
            let pulled = try await Self.pull(connection)
            let offered = pulled.offered.compactMap { $0.arrayValue }.filter { $0.count > 2 && $0[1] == "e" }
            #expect(offered.map { $0[2] } == ["2-bbbb"], "\(offered)")
            #expect(pulled.revs.allSatisfy { !$0.deleted }, "\(pulled.revs)")
            await connection.close()
        }
    }
}
