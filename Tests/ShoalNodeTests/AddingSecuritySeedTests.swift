import DocumentModel
import Foundation
import ShoalNode
import Testing
import TestSupport

/// Seed 002 ("Adding Security"), its curl flow verbatim against a real node over HTTP:
/// the tutorial's config (walrus, `user1`/`user2`), its sync function as each section
/// deploys it ("Deploy To Server" restarts the gateway; walrus keeps no data), and
/// every `curl` of the sections "User Authentication", "Validating Changes" /
/// "Write Permissions" in order, with the answers the tutorial shows.
@Suite struct AddingSecuritySeedTests {
    /// The tutorial's config file (`sync-gateway-config.json`), verbatim.
    static let config = #"""
{
  "log": ["HTTP", "Auth"],
  "databases": {
    "todo": {
      "server": "walrus:",
      "users": {
        "user1": {"password": "pass"},
        "user2": {"password": "pass"}
      }
    }
  }
}
"""#

    /// "Write Permissions": the type validation with the task-list block appended in
    /// the function's body.
    static let typeValidation = """
        function(doc, oldDoc){
          /* Validate */
          // Document type is required and immutable.
          if (!doc.type || (oldDoc && doc.type != oldDoc.type)) {
          \tthrow({forbidden: "type property missing"});
          }
        }
        """

    static let writePermissions = """
        function(doc, oldDoc){
          /* Validate */
          // Document type is required and immutable.
          if (!doc.type || (oldDoc && doc.type != oldDoc.type)) {
          \tthrow({forbidden: "type property missing"});
          }
        if (doc.type == "task-list") {
          /* Control Write Access */
          if (!oldDoc) {
            try {
              // Users can create/update lists for themselves.
              requireUser(doc.owner);
            } catch (e) {
              // Moderators can create/update lists for other users.
              requireRole("moderator");
            }
          }
        }
        }
        """

    /// Starts the tutorial's gateway with `sync` deployed.
    static func start(sync: String) async throws -> TestNode {
        let loaded = try ConfigLoader.load(text: config)
        return try await TestNode.start { configuration in
            configuration.databases = loaded.configuration.databases
            configuration.databases[0].sync = sync
            configuration.passwordIterations = 1000
        }
    }

    /// The tutorial's error entry (Shoal's also names the document's `id`).
    static func error(_ entry: JSON?) -> JSON {
        .object((entry?.objectValue ?? [:]).filter { $0.key != "id" })
    }

    /// `http://user1:pass@localhost:4984/…`: curl sends the URL's credentials as Basic.
    let user1 = TestNode.basic("user1", "pass")

    @Test func curlFlow() async throws {
        // "User Authentication": the PUT that creates user1 (the config already has it).
        let first = try await Self.start(sync: Self.typeValidation)
        let put = try await first.request("PUT", "/todo/_user/user1", json: ["name": "user1", "password": "pass"], admin: true)
        #expect(put.status == 200 || put.status == 201, "\(put)")

        // "Validating Changes": one document without `type` is refused.
        let validated = try await first.request(
            "POST", "/todo/_bulk_docs",
            json: ["docs": [["type": "task-list", "name": "Groceries"], ["names": "Today"]]], headers: user1)
        #expect(validated.status == 201, "\(validated)")
        #expect(validated.json[0]?["id"]?.stringValue != nil && validated.json[0]?["rev"]?.stringValue?.hasPrefix("1-") == true)
        #expect(Self.error(validated.json[1]) == ["error": "forbidden", "reason": "type property missing", "status": 403], "\(validated)")
        await first.stop()

        // "Write Permissions": deployed (a restart; walrus starts empty).
        let node = try await Self.start(sync: Self.writePermissions)
        defer { Task { await node.stop() } }
        let lists: JSON = [
            "docs": [
                ["name": "Today", "type": "task-list", "owner": "user1"],
                ["name": "Groceries", "type": "task-list", "owner": "user2"],
            ]
        ]
        let refused = try await node.request("POST", "/todo/_bulk_docs", json: lists, headers: user1)
        #expect(refused.json[0]?["rev"]?.stringValue?.hasPrefix("1-") == true, "\(refused)")
        #expect(Self.error(refused.json[1]) == ["error": "forbidden", "reason": "missing role", "status": 403], "\(refused)")

        // user1 becomes a moderator; no role document named "moderator" is ever created.
        let promoted = try await node.request("PUT", "/todo/_user/user1", json: ["admin_roles": ["moderator"]], admin: true)
        #expect(promoted.status == 200, "\(promoted)")
        #expect(try await node.request("GET", "/todo/_role/moderator", admin: true).status == 404)
        #expect(try await node.request("GET", "/todo/_user/user1", admin: true).json["roles"] == ["moderator"])

        // "this time both lists are persisted".
        let accepted = try await node.request("POST", "/todo/_bulk_docs", json: lists, headers: user1)
        #expect(accepted.status == 201, "\(accepted)")
        for index in 0..<2 {
            #expect(accepted.json[index]?["rev"]?.stringValue?.hasPrefix("1-") == true, "\(accepted)")
            #expect(accepted.json[index]?["error"] == nil, "\(accepted)")
        }
    }
}
