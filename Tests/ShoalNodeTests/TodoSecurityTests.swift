import DocumentModel
import Foundation
import ShoalNode
import Testing
import TestSupport

/// The todo app's security model (seeds 000 and 002): users `user1`, `user2`, `mod`,
/// `admin`, roles `moderator` and `admin`, and the tutorial's sync function (type
/// validation, owner checks, `task-list.<id>` channels and grants), end to end over
/// the REST API with the errors the tutorial shows.
@Suite(.serialized) struct TodoSecurityTests {
    /// The tutorial's sync function (seed 000, "Access Control"), assembled from its
    /// sections, plus the rule for tasks: a task is routed to its list's channel and may
    /// be written by whoever can read that list.
    static let sync = """
        function(doc, oldDoc){
          /* Type validation */
          if (isCreate()) {
            validateNotEmpty("type", doc.type);
          } else if (isUpdate()) {
            validateReadOnly("type", doc.type, oldDoc.type);
          }

          if (getType() == "task-list") {
            /* Write Access */
            var owner = doc._deleted ? oldDoc.owner : doc.owner;
            try {
              requireRole("moderator");
            } catch (e) {
              requireUser(owner);
            }
            /* Validation */
            if (!isDelete()) {
              validateNotEmpty("name", doc.name);
              validateNotEmpty("owner", doc.owner);
              if (isCreate()) {
                if (!hasPrefix(doc._id, doc.owner + ".")) {
                  throw({forbidden: "task-list id must be prefixed by list owner"});
                }
              } else {
                validateReadOnly("owner", doc.owner, oldDoc.owner);
              }
            }
            /* Routing */
            channel("task-list." + doc._id);
            channel("moderators");
            /* Read Access */
            access(owner, "task-list." + doc._id);
            access(owner, "task-list." + doc._id + ".users");
            access("role:moderator", "task-list." + doc._id);
          }

          if (getType() == "task") {
            var list = isDelete() ? oldDoc.taskList : doc.taskList;
            requireAccess("task-list." + list.id);
            channel("task-list." + list.id);
          }

          function getType() {
            return (isDelete() ? oldDoc.type : doc.type);
          }
          function isCreate() {
            return ((oldDoc == false) || (oldDoc == null || oldDoc._deleted) && !isDelete());
          }
          function isUpdate() {
            return (!isCreate() && !isDelete());
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
          function hasPrefix(value, prefix) {
            if (value && prefix) {
              return value.substring(0, prefix.length) == prefix
            } else {
              return false
            }
          }
        }
        """

    static func startNode() async throws -> TestNode {
        try await TestNode.start(databases: ["todo"]) { configuration in
            configuration.passwordIterations = 1000
            configuration.databases[0].sync = sync
            configuration.databases[0].users = [
                "user1": ["password": "pass", "admin_channels": ["user1"]],
                "user2": ["password": "pass", "admin_channels": ["user2"]],
                "mod": ["password": "pass", "admin_roles": ["moderator"]],
                "admin": ["password": "pass", "admin_roles": ["admin"]],
            ]
            configuration.databases[0].roles = ["moderator": [:], "admin": [:]]
        }
    }

    let user1 = TestNode.basic("user1", "pass")
    let user2 = TestNode.basic("user2", "pass")
    let mod = TestNode.basic("mod", "pass")

    @Test func writesAreValidatedWithTheTutorialsErrors() async throws {
        let node = try await Self.startNode()
        defer { Task { await node.stop() } }
        // Seed 000: a document without a type is rejected, the other one saved.
        let first = try await node.request(
            "POST", "/todo/_bulk_docs", json: ["docs": [["type": "task-list", "name": "Groceries", "owner": "user1", "_id": "user1.groceries"], ["names": "Today"]]],
            headers: user1)
        #expect(first.status == 201)
        #expect(first.json[0]?["id"] == "user1.groceries")
        #expect(first.json[1]?["error"] == "forbidden" && first.json[1]?["status"] == 403)
        #expect(first.json[1]?["reason"] == "type is not provided.")
        // A list for another user: "wrong user".
        let second = try await node.request(
            "POST", "/todo/_bulk_docs", json: ["docs": [["type": "task-list", "owner": "user1", "name": "A", "_id": "user1.a"], ["type": "task-list", "owner": "user2", "name": "B", "_id": "user2.b"]]],
            headers: user1)
        #expect(second.json[0]?["rev"] != nil)
        #expect(second.json[1]?["id"] == "user2.b" && second.json[1]?["status"] == 403)
        #expect(second.json[1]?["reason"] == "wrong user")
        // The ID must be prefixed by the owner.
        try await node.request("PUT", "/todo/list9", json: ["type": "task-list", "owner": "user1", "name": "C"], headers: user1)
            .expectError(403, "forbidden", reason: "task-list id must be prefixed by list owner")
        // A moderator may create lists for others.
        #expect(try await node.request("PUT", "/todo/user2.fromMod", json: ["type": "task-list", "owner": "user2", "name": "D"], headers: mod).status == 201)
        // Type and owner are read-only.
        let rev = try #require(first.json[0]?["rev"]?.stringValue)
        try await node.request("PUT", "/todo/user1.groceries?rev=\(rev)", json: ["type": "task", "owner": "user1", "name": "x"], headers: user1)
            .expectError(403, "forbidden", reason: "type is read-only.")
        try await node.request("PUT", "/todo/user1.groceries?rev=\(rev)", json: ["type": "task-list", "owner": "user2", "name": "x"], headers: user1)
            .expectError(403, "forbidden", reason: "wrong user")
        // Rejected revisions are stored nowhere.
        try await node.request("GET", "/todo/list9", admin: true).expectError(404, "not_found")
        #expect(try await node.request("GET", "/todo/user1.groceries", admin: true).json["_rev"]?.stringValue == rev)
        // Deleting: the owner (from oldDoc) must be the writer.
        try await node.request("DELETE", "/todo/user1.groceries?rev=\(rev)", headers: user2)
            .expectError(403, "forbidden")
        #expect(try await node.request("DELETE", "/todo/user1.groceries?rev=\(rev)", headers: user1).status == 200)
    }

    @Test func eachUserSeesExactlyTheirLists() async throws {
        let node = try await Self.startNode()
        defer { Task { await node.stop() } }
        for (user, headers) in [("user1", user1), ("user2", user2)] {
            for name in ["a", "b"] {
                let saved = try await node.request("PUT", "/todo/\(user).\(name)", json: ["type": "task-list", "owner": .string(user), "name": .string(name)], headers: headers)
                #expect(saved.status == 201)
            }
        }
        // A task in user1's list, written by user1 (who can read the list).
        #expect(try await node.request("PUT", "/todo/t1", json: ["type": "task", "taskList": ["id": "user1.a"], "name": "milk"], headers: user1).status == 201)
        // user2 cannot add tasks to user1's list.
        try await node.request("PUT", "/todo/t2", json: ["type": "task", "taskList": ["id": "user1.a"], "name": "eggs"], headers: user2)
            .expectError(403, "forbidden", reason: "missing channel access")

        func ids(_ path: String, _ headers: [String: String]) async throws -> [String] {
            let result = try await node.request("GET", path, headers: headers)
            #expect(result.status == 200, "\(path): \(result.json)")
            return (result.json["rows"] ?? result.json["results"])?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        }
        #expect(try await ids("/todo/_all_docs", user1) == ["t1", "user1.a", "user1.b"])
        #expect(try await ids("/todo/_all_docs", user2) == ["user2.a", "user2.b"])
        #expect(try await ids("/todo/_changes", user1).sorted() == ["t1", "user1.a", "user1.b"])
        #expect(try await ids("/todo/_changes", user2).sorted() == ["user2.a", "user2.b"])
        // The moderator role is granted every list's channel.
        let modFeed = try await node.request("GET", "/todo/_changes", headers: mod)
        let modUser = try await node.request("GET", "/todo/_user/mod", admin: true)
        #expect(try await ids("/todo/_changes", mod).sorted() == ["t1", "user1.a", "user1.b", "user2.a", "user2.b"], "\(modFeed) \(modUser)")

        #expect(try await node.request("GET", "/todo/user1.a", headers: user1).status == 200)
        try await node.request("GET", "/todo/user1.a", headers: user2).expectError(403, "forbidden")
        try await node.request("GET", "/todo/t1", headers: user2).expectError(403, "forbidden")
        let bulkGet = try await node.request("POST", "/todo/_bulk_get", json: ["docs": [["id": "user1.a"], ["id": "user2.a"]]], headers: user2)
        #expect(bulkGet.json["results"]?[0]?["docs"]?[0]?["error"]?["error"] == "forbidden")
        #expect(bulkGet.json["results"]?[1]?["docs"]?[0]?["ok"]?["_id"] == "user2.a")
        // A channel filter narrows the feed further.
        #expect(try await ids("/todo/_changes?filter=sync_gateway/bychannel&channels=task-list.user1.b", user1) == ["user1.b"])
        #expect(try await ids("/todo/_changes?filter=sync_gateway/bychannel&channels=task-list.user1.b", user2).isEmpty)

        // The admin view: channels and grants of each document (seed 004's response shape).
        let admin = try await node.request("GET", "/todo/_all_docs?channels=true&access=true", admin: true)
        let row = try #require(admin.json["rows"]?.arrayValue?.first { $0["id"] == "user1.a" })
        #expect(row["value"]?["channels"] == ["moderators", "task-list.user1.a"])
        #expect(row["value"]?["access"]?["user1"] == ["task-list.user1.a", "task-list.user1.a.users"])
        #expect(row["value"]?["access"]?["role:moderator"] == ["task-list.user1.a"])
        let raw = try await node.request("GET", "/todo/_raw/user1.a", admin: true)
        #expect(raw.json["_sync"]?["channels"]?["task-list.user1.a"] == .null)
        try await node.request("GET", "/todo/_raw/user1.a", headers: user1).expectError(403, "forbidden")
    }

    /// Grants made by a document last as long as its current revision makes them; a
    /// document that leaves a user's channels shows in the user's feed as removed.
    @Test func revokedAccessAndRemovedDocuments() async throws {
        let node = try await TestNode.start(databases: ["db"]) { configuration in
            configuration.passwordIterations = 1000
            configuration.databases[0].sync = "function(doc, oldDoc) { channel(doc.channels); if (doc.grant) access(doc.grant, doc.grantChannels); }"
            configuration.databases[0].users = ["user1": ["password": "pass", "admin_channels": ["pub"]]]
        }
        defer { Task { await node.stop() } }
        func ids(_ path: String) async throws -> [String] {
            try await node.request("GET", path, headers: user1).json["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        }
        #expect(try await node.request("PUT", "/db/s1", json: ["channels": ["secret"]], admin: true).status == 201)
        let p1 = try #require(try await node.request("PUT", "/db/p1", json: ["channels": ["pub"]], admin: true).rev)
        try await node.request("GET", "/db/s1", headers: user1).expectError(403, "forbidden")
        let g1 = try #require(try await node.request("PUT", "/db/g1", json: ["grant": "user1", "grantChannels": ["secret"]], admin: true).rev)
        // The grant takes effect at once: the new channel's documents are backfilled.
        #expect(try await node.request("GET", "/db/s1", headers: user1).status == 200)
        #expect(try await ids("/db/_changes").sorted() == ["p1", "s1"])
        let since = try #require(try await node.request("GET", "/db/_changes", headers: user1).json["last_seq"]?.intValue)
        // The granting document changes: the grant is revoked.
        #expect(try await node.request("PUT", "/db/g1?rev=\(g1)", json: ["note": "no more grant"], admin: true).status == 201)
        try await node.request("GET", "/db/s1", headers: user1).expectError(403, "forbidden")
        #expect(try await ids("/db/_changes") == ["p1"])
        // p1 leaves the channel user1 reads: the feed reports it removed.
        #expect(try await node.request("PUT", "/db/p1?rev=\(p1)", json: ["channels": ["other"]], admin: true).status == 201)
        let feed = try await node.request("GET", "/db/_changes?since=\(since)", headers: user1)
        let removal = try #require(feed.json["results"]?.arrayValue?.first { $0["id"] == "p1" })
        #expect(removal["removed"] == ["pub"])
        try await node.request("GET", "/db/p1", headers: user1).expectError(403, "forbidden")
        #expect(try await node.request("GET", "/db/_all_docs", headers: user1).json["rows"]?.arrayValue?.isEmpty == true)
    }

    @Test func authenticationAndPrincipals() async throws {
        let node = try await Self.startNode()
        defer { Task { await node.stop() } }
        // No GUEST configured: credentials are required.
        let anonymous = try await node.request("GET", "/todo/_all_docs")
        #expect(anonymous.status == 401)
        #expect(anonymous.headers["www-authenticate"]?.hasPrefix("Basic") == true)
        try await node.request("GET", "/todo/", headers: TestNode.basic("user1", "wrong")).expectError(401, "Unauthorized", reason: "Invalid login")
        try await node.request("GET", "/todo/", headers: TestNode.basic("nobody", "pass")).expectError(401, "Unauthorized")
        try await node.request("GET", "/todo/", headers: ["Authorization": "Basic !!!not-base64"]).expectError(401, "Unauthorized")
        try await node.request("GET", "/todo/", headers: ["Authorization": "Basic " + String(repeating: "A", count: 10000)])
            .expectError(401, "Unauthorized")
        #expect(try await node.request("GET", "/todo/", headers: user1).status == 200)
        // The server root stays open.
        #expect(try await node.request("GET", "/").status == 200)

        // GET never shows the password or its hash.
        let user = try await node.request("GET", "/todo/_user/user1", admin: true)
        #expect(user.json["name"] == "user1")
        #expect(user.json["admin_channels"] == ["user1"])
        #expect(user.json["password"] == nil && user.json["password_hash"] == nil)
        #expect(!user.text.contains("pbkdf2"))
        // Seed 002: a PUT that only sets admin_roles keeps the password.
        #expect(try await node.request("PUT", "/todo/_user/user1", json: ["admin_roles": ["moderator"]], admin: true).status == 200)
        #expect(try await node.request("GET", "/todo/_user/user1", admin: true).json["roles"] == ["moderator"])
        #expect(try await node.request("GET", "/todo/", headers: user1).status == 200)
        // Users and roles are managed only on the admin port.
        try await node.request("GET", "/todo/_user/user1", headers: user1).expectError(403, "forbidden")
        #expect(try await node.request("GET", "/todo/_user/", admin: true).json == ["admin", "mod", "user1", "user2"])
        #expect(try await node.request("POST", "/todo/_user/", json: ["name": "carol", "password": "pw"], admin: true).status == 201)
        try await node.request("POST", "/todo/_user/", json: ["name": "carol", "password": "pw"], admin: true).expectError(409, "conflict")
        try await node.request("PUT", "/todo/_user/dave", json: ["admin_channels": ["x"]], admin: true).expectError(400, "bad_request")
        try await node.request("PUT", "/todo/_user/dave", raw: Array("{not json".utf8), headers: ["Content-Type": "application/json"], admin: true)
            .expectError(400, "bad_request")
        #expect(try await node.request("GET", "/todo/", headers: TestNode.basic("carol", "pw")).status == 200)
        // Disabled users cannot log in; deleted users neither.
        #expect(try await node.request("PUT", "/todo/_user/carol", json: ["disabled": true], admin: true).status == 200)
        try await node.request("GET", "/todo/", headers: TestNode.basic("carol", "pw")).expectError(403, "forbidden", reason: "User is disabled")
        try await node.request("GET", "/todo/", headers: TestNode.basic("carol", "wrong")).expectError(401, "Unauthorized", reason: "Invalid login")
        #expect(try await node.request("DELETE", "/todo/_user/user2", admin: true).status == 200)
        try await node.request("GET", "/todo/", headers: user2).expectError(401, "Unauthorized")
        try await node.request("GET", "/todo/_user/user2", admin: true).expectError(404, "not_found")
        // Roles.
        #expect(try await node.request("PUT", "/todo/_role/viewer", json: ["admin_channels": ["public"]], admin: true).status == 201)
        #expect(try await node.request("GET", "/todo/_role/viewer", admin: true).json == ["name": "viewer", "admin_channels": ["public"], "all_channels": ["public"]])
        #expect(try await node.request("GET", "/todo/_role/", admin: true).json == ["admin", "moderator", "viewer"])

        // Sessions: log in, use the cookie, log out.
        let login = try await node.request("POST", "/todo/_session", json: ["name": "mod", "password": "pass"])
        #expect(login.status == 200)
        #expect(login.json["userCtx"]?["name"] == "mod")
        let cookie = try #require(login.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
        #expect(cookie.hasPrefix("SyncGatewaySession="))
        #expect(try await node.request("GET", "/todo/_session", headers: ["Cookie": cookie]).json["userCtx"]?["name"] == "mod")
        #expect(try await node.request("GET", "/todo/_all_docs", headers: ["Cookie": cookie]).status == 200)
        _ = try await node.request("DELETE", "/todo/_session", headers: ["Cookie": cookie])
        try await node.request("GET", "/todo/_all_docs", headers: ["Cookie": cookie]).expectError(401, "Unauthorized")
        try await node.request("POST", "/todo/_session", json: ["name": "mod", "password": "nope"]).expectError(401, "Unauthorized")
        // Admin-created session.
        let created = try await node.request("POST", "/todo/_session", json: ["name": "user1", "ttl": 60], admin: true)
        let sessionID = try #require(created.json["session_id"]?.stringValue)
        #expect(try await node.request("GET", "/todo/", headers: ["Cookie": "SyncGatewaySession=\(sessionID)"]).status == 200)
    }

    @Test func badSyncFunctionFailsTheStartWithItsLine() throws {
        var configuration = NodeConfiguration()
        configuration.dataDirectory = TemporaryDirectory(prefix: "bad-sync").path
        configuration.databases[0].sync = "function(doc, oldDoc) {\n  channel(doc.x;\n}"
        do {
            _ = try ShoalNode(configuration: configuration)
            Issue.record("a sync function that does not compile must stop the start")
        } catch let error as ConfigLoader.ConfigError {
            #expect(error.message.contains("\"sync\""), "\(error)")
            #expect(error.message.contains("line 2"), "\(error)")
        }
    }
}
