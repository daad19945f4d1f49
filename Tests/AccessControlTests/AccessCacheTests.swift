@testable import AccessControl
import DocumentModel
import DocumentStore
import Foundation
import Testing
import TestSupport

/// Authentication keeps each user's computed access until the database's principals or
/// grants change: the next request after any change sees it, exactly as without a cache.
@Suite struct AccessCacheTests {
    static let grants = """
        function(doc) {
          channel(doc.channels);
          if (doc.grant) access(doc.grant.user, doc.grant.channel);
          if (doc.role) role(doc.role.user, "role:" + doc.role.name);
        }
        """

    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    static func channels(_ principal: Principal) -> Set<String> {
        guard case .user(let access) = principal else { return [] }
        return Set(access.channels.keys)
    }

    @Test func everyChangeIsSeenByTheNextRequest() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let security = DatabaseSecurity(store: store, syncFunction: try SyncFunction(source: Self.grants), passwordIterations: 1000)
        _ = try await security.putUser(name: "alice", json: ["password": "pw1", "admin_channels": ["a"]])
        let auth = Self.basic("alice", "pw1")
        func channels() async throws -> Set<String> {
            Self.channels(try await security.authenticate(authorization: auth, cookie: nil))
        }

        #expect(try await channels() == ["!", "a"])
        let cached = security.accessCache.withLock { $0["alice"] }
        #expect(cached?.generation == store.accessGeneration, "kept after the first request")
        #expect(try await channels() == ["!", "a"])

        // A document's grant (the sync function), then its removal.
        let granted = try await store.put("g", ["grant": ["user": "alice", "channel": "b"]])
        #expect(try await channels() == ["!", "a", "b"])
        try await store.put("g", ["other": true], parent: granted.revID)
        #expect(try await channels() == ["!", "a"])

        // A role from a document, and the role's channels changed by the admin API.
        _ = try await security.putRole(name: "editor", json: ["admin_channels": ["e"]])
        try await store.put("r", ["role": ["user": "alice", "name": "editor"]])
        #expect(try await channels() == ["!", "a", "e"])
        _ = try await security.putRole(name: "editor", json: ["admin_channels": ["e2"]])
        #expect(try await channels() == ["!", "a", "e2"])

        // The user itself: new channels, a new password, disabled, deleted.
        _ = try await security.putUser(name: "alice", json: ["password": "pw2", "admin_channels": ["z"]])
        await #expect(throws: PrincipalError.self) { try await channels() }
        #expect(Self.channels(try await security.authenticate(authorization: Self.basic("alice", "pw2"), cookie: nil)) == ["!", "z", "e2"])
        _ = try await security.putUser(name: "alice", json: ["disabled": true])
        await #expect(throws: PrincipalError(status: 403, reason: "User is disabled")) {
            try await security.authenticate(authorization: Self.basic("alice", "pw2"), cookie: nil)
        }
        try await security.deleteUser(name: "alice")
        await #expect(throws: PrincipalError(status: 401, reason: "Invalid login")) {
            try await security.authenticate(authorization: Self.basic("alice", "pw2"), cookie: nil)
        }
    }

    @Test func guestAndGrantsInAnotherCollection() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let lists = try test.store.collection(CollectionName(scope: "app", name: "lists")!)
        let security = DatabaseSecurity(store: test.store, syncFunction: try SyncFunction(source: Self.grants))
        let listSecurity = DatabaseSecurity(store: lists, syncFunction: try SyncFunction(source: Self.grants))
        await #expect(throws: PrincipalError(status: 401, reason: "Login required")) {
            try await security.authenticate(authorization: nil, cookie: nil)
        }
        _ = try await security.putUser(name: User.guestName, json: ["disabled": false, "admin_channels": ["pub"]])
        #expect(Self.channels(try await security.authenticate(authorization: nil, cookie: nil)) == ["!", "pub"])

        // Roles are the database's: a role() in another collection counts here too.
        _ = try await security.putRole(name: "reader", json: ["admin_channels": ["r"]])
        #expect(Self.channels(try await security.authenticate(authorization: nil, cookie: nil)) == ["!", "pub"])
        try await lists.put("r", ["role": ["user": .string(User.guestName), "name": "reader"]])
        _ = listSecurity
        #expect(Self.channels(try await security.authenticate(authorization: nil, cookie: nil)) == ["!", "pub", "r"])
    }
}
