import BLIP
import DocumentModel
import Foundation
import ShoalNode
import Testing
import TestSupport

/// A Couchbase Lite 3 client syncing two named collections, byte by byte: the frames
/// its replicator sends (built by hand from couchbase-lite-core's `Replicator::
/// getCollections`, `Pusher`, `Puller`: `getCollections` first, then every message with
/// `collection` = the collection's index in that list), and what it requires back.
@Suite(.serialized) struct CollectionsBLIPTests {
    static let config = """
        {"databases": {"todo": {
          "server": "walrus:",
          "users": {"alice": {"password": "pass", "collection_access": {
            "_default": {"lists": {"admin_channels": ["list.alice"]}},
            "app": {"tasks": {"admin_channels": ["tasks"]}}}}},
          "scopes": {
            "_default": {"collections": {"lists": {"sync": `function(doc, oldDoc) { if (!doc._deleted && !doc.owner) throw({forbidden: "lists need an owner"}); channel("list." + (doc.owner || oldDoc.owner)); }`}}},
            "app": {"collections": {"tasks": {"sync": `function(doc) { if (!doc._deleted && !doc.title) throw({forbidden: "tasks need a title"}); channel("tasks"); }`}}}
          }
        }}}
        """

    static func start() async throws -> TestNode {
        let loaded = try ConfigLoader.load(text: config)
        return try await TestNode.start { configuration in
            configuration.databases = loaded.configuration.databases
            configuration.passwordIterations = 1000
        }
    }

    /// A client connection speaking raw BLIP frames (each message one frame, uncompressed).
    final class RawClient {
        let socket: RawSocket
        var sent: [UInt8] = []
        var next = 1
        /// Frames read but not yet asked for.
        var pending: [RawBLIP.Reply] = []

        init(port: Int, path: String, headers: [String: String]) throws {
            socket = try RawSocket(port: port)
            try socket.write(Array(RawBLIP.upgradeRequest(port: port, path: path, headers: headers).utf8))
            let head = try socket.readHead()
            guard head.status == 101 else { throw RawClientError(description: "upgrade: HTTP \(head.status)") }
        }

        /// Sends a request (MSG); returns its number.
        @discardableResult
        func send(_ properties: [(String, String)], body: JSON? = nil) throws -> Int {
            let number = next
            next += 1
            try write(number: number, flags: 0x00, properties: properties, body: body?.canonicalBytes() ?? [])
            return number
        }

        /// Answers the server's request `number` (RPY).
        func reply(to number: Int, body: JSON) throws {
            try write(number: number, flags: 0x01, properties: [], body: body.canonicalBytes())
        }

        private func write(number: Int, flags: UInt8, properties: [(String, String)], body: [UInt8]) throws {
            let data = RawBLIP.messageData(properties: properties, body: body)
            let frame = RawBLIP.frame(number: number, flags: flags, data: data, sentBefore: sent)
            sent += data
            try socket.write(RawBLIP.maskedBinary(frame))
        }

        /// The next frame matching `predicate` (others are kept for later).
        func read(_ predicate: (RawBLIP.Reply) -> Bool) throws -> RawBLIP.Reply {
            if let index = pending.firstIndex(where: predicate) { return pending.remove(at: index) }
            for _ in 0..<50 {
                let frame = try RawBLIP.readReply(socket)
                if predicate(frame) { return frame }
                pending.append(frame)
            }
            throw RawClientError(description: "no such frame; got \(pending)")
        }

        /// The reply (RPY 1 or ERR 2) to our request `number`.
        func answer(to number: Int) throws -> RawBLIP.Reply {
            try read { $0.number == number && ($0.type == 1 || $0.type == 2) }
        }

        /// The server's next request with `profile`.
        func request(_ profile: String) throws -> RawBLIP.Reply {
            try read { $0.type == 0 && $0.property("Profile") == profile }
        }
    }

    @Test func aCouchbaseLite3ClientSyncsTwoCollections() async throws {
        let node = try await Self.start()
        defer { Task { await node.stop() } }
        #expect(try await node.request("PUT", "/todo.app.tasks/t1", json: ["title": "first"], admin: true).status == 201)
        let checkpoint = try await node.request(
            "PUT", "/todo.app.tasks/_local/checkpoint/cp-tasks", json: ["local": 0, "remote": 5], admin: true)
        #expect(checkpoint.status == 201, "\(checkpoint)")
        let note = Array("a note".utf8)
        let attached = try await node.request("PUT", "/todo.app.tasks/t3", json: [
            "title": "with note", "_attachments": ["n.txt": ["content_type": "text/plain", "data": .string(Data(note).base64EncodedString())]],
        ], admin: true)
        #expect(attached.status == 201, "\(attached)")
        let digest = Digests.attachmentDigest(of: note)
        let port = node.ports.publicPort

        try await offThePool {
            let client = try RawClient(port: port, path: "/todo/_blipsync", headers: TestNode.basic("alice", "pass"))
            // getCollections: one checkpoint per collection ({} = none yet), in list order.
            let collections = try client.send([("Profile", "getCollections")], body: [
                "checkpoint_ids": ["cp-lists", "cp-tasks"], "collections": ["_default.lists", "app.tasks"],
            ])
            let checkpoints = try client.answer(to: collections)
            #expect(checkpoints.type == 1, "\(checkpoints)")
            #expect(String(decoding: checkpoints.body, as: UTF8.self) == #"[{},{"local":0,"remote":5,"rev":"0-1"}]"#)

            // Push into collection 0 (lists), as the Pusher does: proposeChanges, then rev.
            let propose = try client.send(
                [("Profile", "proposeChanges"), ("collection", "0"), ("conflictIncludesRev", "true")],
                body: [["l1", "1-abc1"], ["l2", "1-abc2"]])
            #expect(String(decoding: try client.answer(to: propose).body, as: UTF8.self) == "[]")
            let kept = try client.send(
                [("Profile", "rev"), ("collection", "0"), ("id", "l1"), ("rev", "1-abc1"), ("sequence", "1"), ("noconflicts", "true")],
                body: ["owner": "alice"])
            #expect(try client.answer(to: kept).type == 1)
            // The lists sync function refuses a list without owner…
            let refused = try client.send(
                [("Profile", "rev"), ("collection", "0"), ("id", "l2"), ("rev", "1-abc2"), ("sequence", "2")],
                body: ["title": "no owner"])
            let refusal = try client.answer(to: refused)
            #expect(refusal.type == 2 && refusal.property("Error-Code") == "403", "\(refusal)")
            #expect(String(decoding: refusal.body, as: UTF8.self) == "lists need an owner")
            // …which the tasks function accepts in collection 1.
            let task = try client.send(
                [("Profile", "rev"), ("collection", "1"), ("id", "t2"), ("rev", "1-abc3"), ("sequence", "3")],
                body: ["title": "no owner"])
            #expect(try client.answer(to: task).type == 1)

            // Pull collection 1 (tasks): subChanges, changes (answered), rev — all tagged 1.
            let sub = try client.send([("Profile", "subChanges"), ("collection", "1"), ("batch", "200"), ("versioning", "rev-trees")])
            #expect(try client.answer(to: sub).type == 1)
            let changes = try client.request("changes")
            #expect(changes.property("collection") == "1", "\(changes)")
            let offered = (try? JSON.parse(changes.body))?.arrayValue ?? []
            #expect(offered.compactMap { $0[1]?.stringValue } == ["t1", "t3", "t2"], "\(changes)")
            try client.reply(to: changes.number, body: [[]])
            let rev = try client.request("rev")
            #expect(rev.property("collection") == "1" && rev.property("id") == "t1", "\(rev)")
            #expect(String(decoding: rev.body, as: UTF8.self) == #"{"title":"first"}"#)

            // getAttachment names its collection: the document is looked up there.
            let fetch = try client.send([("Profile", "getAttachment"), ("collection", "1"), ("digest", digest), ("docID", "t3")])
            #expect(try client.answer(to: fetch).body == note)
            let elsewhere = try client.send([("Profile", "getAttachment"), ("collection", "0"), ("digest", digest), ("docID", "t3")])
            let refusedAttachment = try client.answer(to: elsewhere)
            #expect(refusedAttachment.type == 2 && refusedAttachment.property("Error-Code") == "403", "\(refusedAttachment)")

            // A collection index that getCollections did not define: HTTP 400.
            let stray = try client.send([("Profile", "proposeChanges"), ("collection", "7")], body: [["x", "1-abc9"]])
            let strayAnswer = try client.answer(to: stray)
            #expect(strayAnswer.type == 2 && strayAnswer.property("Error-Code") == "400", "\(strayAnswer)")
        }

        #expect(try await node.request("GET", "/todo.lists/l1", admin: true).json["owner"] == "alice")
        #expect(try await node.request("GET", "/todo/l1", admin: true).status == 404)
        #expect(try await node.request("GET", "/todo.lists/l2", admin: true).status == 404)
        #expect(try await node.request("GET", "/todo.app.tasks/t2", admin: true).json["title"] == "no owner")
    }

    /// `getCollections` naming a collection the database lacks answers `null` for it
    /// (Couchbase Lite then stops: "not found on the remote server"); malformed ones are
    /// BLIP/400, and only the first `getCollections` of a connection is served.
    @Test func getCollectionsRefusals() async throws {
        let node = try await Self.start()
        defer { Task { await node.stop() } }
        let port = node.ports.publicPort
        try await offThePool {
            // A collection's keyspace has no BLIP endpoint of its own.
            let socket = try RawSocket(port: port)
            try socket.write(Array(RawBLIP.upgradeRequest(port: port, path: "/todo._default.lists/_blipsync").utf8))
            #expect(try socket.readHead().status == 404)
            let client = try RawClient(port: port, path: "/todo/_blipsync", headers: TestNode.basic("alice", "pass"))
            let bad = try client.send([("Profile", "getCollections")], body: ["checkpoint_ids": ["a"], "collections": ["x", "y"]])
            let badAnswer = try client.answer(to: bad)
            #expect(badAnswer.type == 2 && badAnswer.property("Error-Domain") == "BLIP", "\(badAnswer)")
            #expect(String(decoding: badAnswer.body, as: UTF8.self)
                == "Invalid getCollections message: mismatched checkpoint_ids and collections")
        }
        try await offThePool {
            let client = try RawClient(port: port, path: "/todo/_blipsync", headers: TestNode.basic("alice", "pass"))
            let first = try client.send([("Profile", "getCollections")], body: [
                "checkpoint_ids": ["a", "b", "c"], "collections": ["nope", "_default", "app.tasks"],
            ])
            #expect(String(decoding: try client.answer(to: first).body, as: UTF8.self) == "[null,{},{}]")
            let again = try client.send([("Profile", "getCollections")], body: ["checkpoint_ids": ["a"], "collections": ["app.tasks"]])
            #expect(String(decoding: try client.answer(to: again).body, as: UTF8.self)
                == "Invalid getCollections message: not the first message")
        }
    }
}

/// A raw client's failure.
struct RawClientError: Error, CustomStringConvertible {
    let description: String
}

extension RawBLIP.Reply {
    /// A property of the frame (a whole message in one frame).
    func property(_ name: String) -> String? {
        let parts = properties.split(separator: "\0", omittingEmptySubsequences: false).map(String.init)
        var index = 0
        while index + 1 < parts.count {
            if parts[index] == name { return parts[index + 1] }
            index += 2
        }
        return nil
    }
}
