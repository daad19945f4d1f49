import DocumentModel
import Foundation
@testable import ShoalNode
import Testing
import TestSupport

/// Seed 004's public/private channels scenario, with its config file loaded unchanged:
/// jane and joe each see the public documents and their own private ones, on the node
/// they write to and on a second node that receives everything through the mesh (where
/// the sync function runs again, as the mesh principal, with the same outcome).
@Suite struct JaneJoeSeedTests {
    static func start(peers: [String] = []) async throws -> TestNode {
        let loaded = try ConfigLoader.load(text: SeedConfigs.janeJoe)
        return try await TestNode.start { configuration in
            configuration.databases = loaded.configuration.databases
            configuration.cors = loaded.configuration.cors
            configuration.passwordIterations = 1000
            configuration.heartbeat = .milliseconds(500)
            configuration.peers = peers
        }
    }

    let jane = TestNode.basic("jane", "password")
    let joe = TestNode.basic("joe", "password")

    @Test func publicAndPrivateChannels() async throws {
        let a = try await Self.start()
        let b = try await Self.start(peers: ["ws://127.0.0.1:\(a.ports.publicPort)/demo"])
        defer { Task { for node in [a, b] { await node.stop() } } }

        // GUEST is disabled in this config.
        try await a.request("GET", "/demo/_all_docs").expectError(401, "Unauthorized")
        #expect(try await a.request("PUT", "/demo/doc101", json: ["name": "doc101", "overview": "This is a private doc from Jane", "owner": "jane", "tag": "private"], headers: jane).status == 201)
        #expect(try await a.request("PUT", "/demo/doc102", json: ["name": "doc102", "overview": "This is a public doc shared by Jane", "owner": "jane", "tag": "public"], headers: jane).status == 201)
        // joe cannot write a private document in jane's name, nor one without a tag.
        try await a.request("PUT", "/demo/doc103", json: ["owner": "jane", "tag": "private"], headers: joe)
            .expectError(403, "forbidden", reason: "wrong user")
        try await a.request("PUT", "/demo/doc104", json: ["owner": "joe"], headers: joe)
            .expectError(403, "forbidden", reason: "Invalid document type: Tag not providedundefined")
        #expect(try await a.request("PUT", "/demo/doc105", json: ["owner": "joe", "tag": "private", "name": "joe's"], headers: joe).status == 201)
        // The tag of a document cannot change.
        let rev = try #require(try await a.request("GET", "/demo/doc105", headers: joe).rev)
        try await a.request("PUT", "/demo/doc105?rev=\(rev)", json: ["owner": "joe", "tag": "public"], headers: joe)
            .expectError(403, "forbidden", reason: "Cannot change tag of document")

        for node in [a, b] {
            // b gets everything through the mesh…
            #expect(try await eventually { try await node.request("GET", "/demo/_all_docs", admin: true).json["total_rows"] == 3 })
            // …and each user sees the same on both nodes.
            func visible(_ headers: [String: String]) async throws -> [String] {
                try await node.request("GET", "/demo/_all_docs", headers: headers).json["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            }
            #expect(try await visible(jane) == ["doc101", "doc102"])
            #expect(try await visible(joe) == ["doc102", "doc105"])
            try await node.request("GET", "/demo/doc101", headers: joe).expectError(403, "forbidden")
            // The admin view of seed 004: each row with its channels.
            let admin = try await node.request("GET", "/demo/_all_docs?channels=true&include_docs=true", admin: true).json
            let channels = admin["rows"]?.arrayValue?.map { $0["value"]?["channels"] ?? .null }
            #expect(channels == [["_jane"], ["_public"], ["_joe"]])
        }
    }

    // MARK: The post's flow ("Synchronization of Documents Across Users") and its curl

    static let privateDoc: [String: JSON] = [
        "_id": "-6gCouN6jj0ScYgpMD7Qj1a", "_rev": "1-dfa6d453a1515ee3dd64012ccaf53046",
        "name": "doc101", "overview": "This is a private doc from Jane", "owner": "jane", "tag": "private",
    ]
    static let publicDoc: [String: JSON] = [
        "_id": "-A2wR44pAFCdu1Yufx14_1S", "_rev": "1-1a8cd0ea3b7574cf6f7ba4a10152a466",
        "name": "doc102", "overview": "This is a public doc shared by Jane", "owner": "jane", "tag": "public",
    ]

    /// The app (Couchbase Lite 1.4) pushes over the REST replication protocol: a
    /// checkpoint look-up, `_revs_diff`, `_bulk_docs` with `new_edits: false` (its own
    /// document and revision IDs kept), the checkpoint saved.
    static func push(_ docs: [[String: JSON]], to node: TestNode, as user: [String: String]) async throws {
        let checkpoint = "/demo/_local/" + String(repeating: "c", count: 40)
        let before = try await node.request("GET", checkpoint, headers: user)
        #expect(before.status == 404 || before.status == 200, "\(before)")
        var asked: [String: JSON] = [:]
        for doc in docs { asked[doc["_id"]!.stringValue!] = [doc["_rev"]!] }
        let diff = try await node.request("POST", "/demo/_revs_diff", json: .object(asked), headers: user)
        #expect(diff.status == 200, "\(diff)")
        let revisions = docs.map { doc -> JSON in
            var doc = doc
            let rev = doc["_rev"]!.stringValue!
            doc["_revisions"] = ["start": 1, "ids": [.string(String(rev.dropFirst(2)))]]
            return .object(doc)
        }
        let missing = revisions.filter { diff.json[$0["_id"]!.stringValue!]?["missing"] != nil }
        let bulk = try await node.request("POST", "/demo/_bulk_docs", json: ["docs": .array(missing), "new_edits": false], headers: user)
        #expect(bulk.status == 201, "\(bulk)")
        #expect(bulk.json.arrayValue?.allSatisfy { $0["error"] == nil } == true, "\(bulk)")
        var body: [String: JSON] = ["lastSequence": .string(String(docs.count))]
        if let rev = before.json["_rev"] { body["_rev"] = rev }
        let saved = try await node.request("PUT", checkpoint, json: .object(body), headers: user)
        #expect(saved.status == 201, "\(saved)")
    }

    /// The post's steps with its config file loaded: jane adds a private and a public
    /// document in the app, joe logs in and pulls (the public one only), then the
    /// post's `curl` on the admin port, whose answer is checked against the one shown.
    @Test func curlFlow() async throws {
        let node = try await Self.start()
        defer { Task { await node.stop() } }
        // The config's `"CORS": {"Origin": ["*"]}` (Go's case-insensitive keys): on.
        let preflight = try await node.request("OPTIONS", "/demo/", headers: ["Origin": "http://app.example", "Access-Control-Request-Method": "GET"])
        #expect(preflight.status == 204 && preflight.headers["access-control-allow-origin"] == "http://app.example", "\(preflight)")

        // 2-4: jane logs in and adds the private document, then the public one.
        try await Self.push([Self.privateDoc], to: node, as: jane)
        try await Self.push([Self.publicDoc], to: node, as: jane)
        // joe may not push a private document in jane's name.
        var forged = Self.privateDoc
        forged["_id"] = "-forged"
        forged["_revisions"] = ["start": 1, "ids": ["dfa6d453a1515ee3dd64012ccaf53046"]]
        let refused = try await node.request("POST", "/demo/_bulk_docs", json: ["docs": [.object(forged)], "new_edits": false], headers: joe)
        #expect(refused.json[0]?["error"] == "forbidden", "\(refused)")

        // 5-7: joe logs in; "the public document that was created by Jane will be listed".
        let feed = try await node.request("POST", "/demo/_changes", json: ["feed": "normal", "style": "all_docs", "since": 0], headers: joe)
        let ids = feed.json["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
        #expect(ids == ["-A2wR44pAFCdu1Yufx14_1S"], "\(feed)")
        // Deliberate difference: `_bulk_get` answers CouchDB 2's JSON (PouchDB's form),
        // not the multipart body Couchbase Lite 1.x read (docs/rest-api.md).
        let bulkGet = try await node.request(
            "POST", "/demo/_bulk_get?revs=true", json: ["docs": [["id": "-A2wR44pAFCdu1Yufx14_1S", "rev": "1-1a8cd0ea3b7574cf6f7ba4a10152a466"]]],
            headers: joe)
        #expect(bulkGet.json["results"]?[0]?["docs"]?[0]?["ok"]?["overview"] == "This is a public doc shared by Jane", "\(bulkGet)")
        try await node.request("GET", "/demo/-6gCouN6jj0ScYgpMD7Qj1a", headers: joe).expectError(403, "forbidden")

        // The post's curl, verbatim.
        let headers = ["accept": "application/json", "cache-control": "no-cache", "content-type": "application/json"]
        let answer = try await node.request("GET", "/demo/_all_docs?access=false&channels=false&include_docs=true", admin: true, headers: headers)
        #expect(answer.status == 200, "\(answer)")
        func row(_ doc: [String: JSON], channels: [JSON]?) -> JSON {
            var value: [String: JSON] = ["rev": doc["_rev"]!]
            if let channels { value["channels"] = .array(channels) }
            return ["key": doc["_id"]!, "id": doc["_id"]!, "value": .object(value), "doc": .object(doc)]
        }
        // The rows as shown, except that `channels=false` leaves the channels out (the
        // parameter's documented meaning; the post's answer shows them as `channels=true`
        // does, checked below).
        #expect(answer.json["rows"] == [row(Self.privateDoc, channels: nil), row(Self.publicDoc, channels: nil)], "\(answer)")
        #expect(answer.json["total_rows"] == 2, "\(answer)")
        // Deliberate difference: `update_seq` counts document changes only (Sync Gateway's
        // 5 also counts the users' records, which share its sequence).
        #expect(answer.json["update_seq"] == 2, "\(answer)")
        let withChannels = try await node.request("GET", "/demo/_all_docs?access=false&channels=true&include_docs=true", admin: true, headers: headers)
        #expect(withChannels.json["rows"] == [row(Self.privateDoc, channels: ["_jane"]), row(Self.publicDoc, channels: ["_public"])], "\(withChannels)")
    }
}
