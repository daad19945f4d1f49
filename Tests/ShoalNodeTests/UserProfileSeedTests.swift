import DocumentModel
import Foundation
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
}
