import BLIP
import DocumentModel
import Foundation
import Replication
import ShoalNode
import Synchronization
import Testing
import TestSupport

/// Seed 003's user-profile sample: each user owns the document `user::<email>`,
/// routed to `channel.<email>` and readable only by that user (the seed's function,
/// written as a named `function sync(doc, oldDoc)` as in the sample's config, with
/// the e-mail addresses the scraped text lost restored).
@Suite struct UserProfileSeedTests {
    static let sync = """
        function sync(doc, oldDoc) {
          /* Data Validation */
          if (!isDelete()) {
            // Validate the presence of email fields
            validateNotEmpty("email", doc.email);
            // Check if document is being created / added for first time
            if (isCreate()) {
              // Validate that the document Id _id is prefixed by owner.
              var expectedDocId = "user" + "::" + doc.email;
              if (expectedDocId != doc._id) {
                throw({forbidden: "user doc Id must be of form user:email"});
              }
            } else {
              // Validate that the email hasn't changed.
              validateReadOnly("email", doc.email, oldDoc.email);
            }
          }
          /* Authorization */
          // Verify the user making the request is the same as the one in doc's email
          requireUser(getEmail());
          /* Routing */
          var email = getEmail();
          channel("channel." + email);
          /* Access Control */
          if (!isDelete()) {
            access(email, "channel." + email);
          }
          function getEmail() {
            return (isDelete() ? oldDoc.email : doc.email);
          }
          function isCreate() {
            return ((oldDoc == false) || (oldDoc == null || oldDoc._deleted) && !isDelete());
          }
          function isDelete() {
            return (doc._deleted == true);
          }
          function validateNotEmpty(key, value) {
            if (!value) {
              throw({forbidden: key + " is not provided."});
            }
          }
          function validateReadOnly(name, value, oldValue) {
            if (value != oldValue) {
              throw({forbidden: name + " is read-only."});
            }
          }
        }
        """

    @Test func eachUserOwnsItsProfile() async throws {
        let node = try await TestNode.start(databases: ["userprofile"]) { configuration in
            configuration.passwordIterations = 1000
            configuration.databases[0].sync = Self.sync
            configuration.databases[0].users = [
                "demo@example.com": ["password": "password"],
                "other@example.com": ["password": "password"],
            ]
        }
        defer { Task { await node.stop() } }
        let demo = TestNode.basic("demo@example.com", "password")
        let other = TestNode.basic("other@example.com", "password")
        let profile: JSON = ["email": "demo@example.com", "name": "Demo", "address": "Somewhere"]
        try await node.request("PUT", "/userprofile/profile1", json: profile, headers: demo)
            .expectError(403, "forbidden", reason: "user doc Id must be of form user:email")
        try await node.request("PUT", "/userprofile/user::demo@example.com", json: ["name": "no email"], headers: demo)
            .expectError(403, "forbidden", reason: "email is not provided.")
        try await node.request("PUT", "/userprofile/user::demo@example.com", json: profile, headers: other)
            .expectError(403, "forbidden", reason: "wrong user")
        let saved = try await node.request("PUT", "/userprofile/user::demo@example.com", json: profile, headers: demo)
        #expect(saved.status == 201)
        let rev = try #require(saved.rev)
        try await node.request("PUT", "/userprofile/user::demo@example.com?rev=\(rev)", json: ["email": "new@example.com"], headers: demo)
            .expectError(403, "forbidden", reason: "email is read-only.")
        // Only its owner reads it: the access() grant made by the document itself.
        #expect(try await node.request("GET", "/userprofile/user::demo@example.com", headers: demo).json["name"] == "Demo")
        try await node.request("GET", "/userprofile/user::demo@example.com", headers: other).expectError(403, "forbidden")
        let feed = try await node.request(
            "GET", "/userprofile/_changes?filter=sync_gateway/bychannel&channels=channel.demo@example.com", headers: demo)
        #expect(feed.json["results"]?.arrayValue?.map { $0["id"] } == ["user::demo@example.com"])
    }

    // MARK: The tutorial's flow ("Try it Out", Exercises 1 and 2)

    static let email = "demo@example.com"
    static let docID = "user::demo@example.com"
    /// The profile picture the app stores as a blob (14989 bytes, as in the tutorial).
    static let image: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + (0..<14985).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    static let imageDigest = Digests.attachmentDigest(of: image)
    /// The app's blob property (Couchbase Lite 2.x's `CBLBlob` as JSON).
    static let blob: JSON = [
        "@type": "blob", "content_type": "image/jpeg", "digest": .string(imageDigest), "length": 14989,
    ]
    static let rev1 = "1-" + String(repeating: "1a", count: 20)
    static let rev2 = "2-3a76cfa911e2c54d1e82b29dbffc7f4e5a9bc265"

    /// Dials `/userprofile/_blipsync` as the app does once the user logged in
    /// (`BasicAuthenticator(username:password:)`), without Shoal's replicator header.
    static func asApp(_ node: TestNode, _ session: @escaping @Sendable (BLIPConnection) async throws -> Void) async throws {
        try await WebSocketDialer(extraHeaders: [:]).dial(
            url: "ws://127.0.0.1:\(node.ports.publicPort)/userprofile/_blipsync", username: email, password: "password",
            heartbeat: .seconds(2), session: session)
    }

    /// The seed's flow, with its config file loaded: the gateway answers the browser,
    /// one app pushes the profile (then its picture, as a blob with Couchbase Lite 2.x's
    /// legacy `_attachments` entry), the other app pulls the user's channel live, and
    /// Exercise 2's two `curl`s on the admin port run verbatim, with the answers shown.
    @Test func dataSyncFundamentals() async throws {
        let loaded = try ConfigLoader.load(text: SeedConfigs.userProfile)
        let node = try await TestNode.start { configuration in
            configuration.databases = loaded.configuration.databases
            configuration.passwordIterations = 1000
        }
        defer { Task { await node.stop() } }

        // "Open a browser and enter http://localhost:4984". Deliberate difference: the
        // vendor is Shoal, not "Couchbase Sync Gateway" (docs/rest-api.md, `GET /`).
        let welcome = try await node.request("GET", "/")
        #expect(welcome.status == 200)
        #expect(welcome.json["couchdb"] == "Welcome", "\(welcome)")
        #expect(welcome.json["vendor"]?["name"] == "Shoal", "\(welcome)")

        // Exercise 1: the second simulator, logged in as the same user, pulls its channel
        // continuously (`config.channels = [userChannel]`, `continuous = true`).
        let pulled = Mutex<[String: (rev: String, body: JSON)]>([:])
        let other = Task {
            try await Self.asApp(node) { connection in
                connection.setHandler(for: "changes", serial: true) { message in
                    let entries = (try? JSON.parse(message.body))?.arrayValue ?? []
                    return BLIPMessage(body: JSON.array(entries.map { _ in [] }).canonicalBytes())
                }
                connection.setHandler(for: "rev") { message in
                    let body = (try? JSON.parse(message.body)) ?? .null
                    pulled.withLock { $0[message["id"] ?? ""] = (message["rev"] ?? "", body) }
                    return BLIPMessage()
                }
                _ = try await connection.sendRequest(BLIPMessage(profile: "subChanges", properties: [
                    ("continuous", "true"), ("filter", "sync_gateway/bychannel"), ("channels", "channel.\(Self.email)"),
                ]))
                try await Task.sleep(for: .seconds(60))
            }
        }
        defer { other.cancel() }

        // The first simulator: the user enters a name and an address, then a picture.
        var profile: [String: JSON] = [
            "type": "user", "email": .string(Self.email), "name": "Jane Doe", "address": "1 Elm Street",
            "university": "British Institute in Paris, University of London",
        ]
        try await Self.asApp(node) { [profile] connection in
            connection.setHandler(for: "getAttachment") { message in
                #expect(message["digest"] == Self.imageDigest)
                return BLIPMessage(body: Self.image)
            }
            let proposed = try await connection.sendRequest(BLIPMessage(
                profile: "proposeChanges", body: JSON.array([[.string(Self.docID), .string(Self.rev1)]]).canonicalBytes()))
            #expect(try JSON.parse(proposed.body) == [], "\(proposed)")
            _ = try await connection.sendRequest(BLIPMessage(
                profile: "rev", properties: [("id", Self.docID), ("rev", Self.rev1)], body: JSON.object(profile).canonicalBytes()))
            var withImage = profile
            withImage["image"] = Self.blob
            withImage["_attachments"] = [
                "blob_1": [
                    "content_type": "image/jpeg", "digest": .string(Self.imageDigest), "length": 14989, "revpos": 2, "stub": true,
                ]
            ]
            let second = try await connection.sendRequest(BLIPMessage(
                profile: "proposeChanges",
                body: JSON.array([[.string(Self.docID), .string(Self.rev2), .string(Self.rev1)]]).canonicalBytes()))
            #expect(try JSON.parse(second.body) == [], "\(second)")
            _ = try await connection.sendRequest(BLIPMessage(
                profile: "rev", properties: [("id", Self.docID), ("rev", Self.rev2), ("history", Self.rev1)],
                body: JSON.object(withImage).canonicalBytes()))
            await connection.close()
        }
        // "Confirm that changes show up in the app on the other simulator."
        #expect(await eventually { pulled.withLock { $0[Self.docID]?.rev } == Self.rev2 })

        // Exercise 2: "get the user profile document via GET Document REST API".
        let headers = ["Accept": "application/json", "Cache-Control": "no-cache", "Content-Type": "application/json"]
        let got = try await node.request("GET", "/userprofile/\(Self.docID)", admin: true, headers: headers)
        #expect(got.status == 200, "\(got)")
        profile["image"] = Self.blob
        var expected = profile
        expected["_id"] = .string(Self.docID)
        expected["_rev"] = .string(Self.rev2)
        // Pushed by a revision-tree client: the revision's legacy version (Sync Gateway 4's `_cv`).
        expected["_cv"] = .string(Version.legacy(revID: RevID(Self.rev2)!).description)
        expected["_attachments"] = [
            "blob_1": [
                "content_type": "image/jpeg", "digest": .string(Self.imageDigest), "length": 14989, "revpos": 2, "stub": true,
            ]
        ]
        #expect(got.json == .object(expected), "\(got)")

        // "update the user profile document via PUT Document REST API": the body as
        // shown (no `_attachments`), the revision recorded above in the URL.
        var update = profile
        update["address"] = "101 Main Street"
        let put = try await node.request(
            "PUT", "/userprofile/\(Self.docID)?rev=\(Self.rev2)", json: .object(update), admin: true, headers: headers)
        // "Confirm that you get a HTTP "201 Created" status code".
        #expect(put.status == 201, "\(put)")
        let rev3 = try #require(put.rev)
        #expect(rev3.hasPrefix("3-"))
        // "confirm that the changes show up in the mobile app on the simulator".
        #expect(await eventually { pulled.withLock { $0[Self.docID]?.rev } == rev3 })
        #expect(pulled.withLock { $0[Self.docID]?.body["address"] } == "101 Main Street")
    }
}
