import AccessControl
import DocumentModel
import DocumentStore
import Testing
import TestSupport

/// Sync Gateway's role rule: a role name granted to a user (its `admin_roles`, or
/// `role()` in the sync function) satisfies `requireRole()` whether or not a role
/// document of that name exists; a role document only adds channels.
@Suite struct RoleNameTests {
    static let sync = """
        function(doc, oldDoc) {
          if (doc.type == "promotion") { role(doc.user, "role:" + doc.role); return; }
          if (doc.type == "moderated") requireRole("moderator");
          if (doc.type == "edited") requireRole("editor");
          channel(doc.channel);
        }
        """

    @Test func grantedRoleNamesSatisfyRequireRoleWithoutARoleDocument() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let security = DatabaseSecurity(store: test.store, syncFunction: try SyncFunction(source: Self.sync), passwordIterations: 1000)
        _ = try await security.putUser(name: "ann", json: ["password": "pw", "admin_roles": ["moderator"]])
        _ = try await security.putUser(name: "bob", json: ["password": "pw"])
        #expect(try await security.role(named: "moderator") == nil)

        func write(_ id: String, _ body: [String: JSON], as name: String) async throws -> Bool {
            let user = try #require(try await security.user(named: name))
            let author = try await security.access(for: user).syncUser
            do {
                _ = try await test.store.save(DocumentUpdate(docID: id, body: body, mode: .edit(parent: nil)), author: author)
                return true
            } catch {
                return false
            }
        }
        // An admin role that has no role document.
        #expect(try await write("m1", ["type": "moderated", "channel": "c"], as: "ann"))
        #expect(try await !write("m2", ["type": "moderated", "channel": "c"], as: "bob"))
        // A role given by the sync function, with no role document either.
        #expect(try await write("p1", ["type": "promotion", "user": "bob", "role": "editor"], as: "ann"))
        #expect(try await write("e1", ["type": "edited", "channel": "c"], as: "bob"))
        #expect(try await !write("e2", ["type": "edited", "channel": "c"], as: "ann"))

        // The names show in the user's `roles`; channels still come only from role documents.
        let bob = try #require(try await security.user(named: "bob"))
        #expect(Set(try await security.access(for: bob).roles.keys) == ["editor"])
        #expect(try await security.userJSON(name: "ann")["roles"] == ["moderator"])
        #expect(try await security.access(for: bob).channels.keys.sorted() == ["!"])
        _ = try await security.putRole(name: "editor", json: ["admin_channels": ["drafts"]])
        #expect(try await security.access(for: bob).channels.keys.sorted() == ["!", "drafts"])
    }
}
