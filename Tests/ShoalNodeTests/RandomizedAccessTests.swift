import DocumentModel
import Foundation
import Testing
import TestSupport

/// Many users, roles, channels and documents with random admin channels, roles and
/// document grants: every user's view over REST (`_all_docs`, `_changes`, single
/// GETs) and over BLIP (a pull as that user) is exactly the set a model of Sync
/// Gateway's rules allows — nothing leaked, nothing missing — before and after grants
/// are revoked.
@Suite struct RandomizedAccessTests {
    static let sync = """
        function(doc, oldDoc) {
          channel(doc.channels);
          if (doc.grants) { for (var user in doc.grants) { access(user, doc.grants[user]); } }
          if (doc.roles) { for (var member in doc.roles) { role(member, doc.roles[member]); } }
        }
        """

    /// The model: what each user may read.
    struct Model {
        var userChannels: [String: Set<String>] = [:]
        var userRoles: [String: Set<String>] = [:]
        var roleChannels: [String: Set<String>] = [:]
        var docs: [String: [String: JSON]] = [:]

        func channels(of user: String) -> Set<String> {
            var roles = userRoles[user] ?? []
            var channels = userChannels[user] ?? []
            for doc in docs.values {
                for (grantee, granted) in doc["grants"]?.objectValue ?? [:] where grantee == user {
                    channels.formUnion(granted.arrayValue?.compactMap(\.stringValue) ?? [])
                }
                for (member, given) in doc["roles"]?.objectValue ?? [:] where member == user {
                    roles.formUnion(given.arrayValue?.compactMap(\.stringValue) ?? [])
                }
            }
            for role in roles {
                guard let admin = roleChannels[role] else { continue }   // roles that exist
                channels.formUnion(admin)
                for doc in docs.values {
                    for (grantee, granted) in doc["grants"]?.objectValue ?? [:] where grantee == "role:\(role)" {
                        channels.formUnion(granted.arrayValue?.compactMap(\.stringValue) ?? [])
                    }
                }
            }
            return channels
        }

        func visible(to user: String) -> Set<String> {
            let channels = channels(of: user)
            return Set(docs.filter { _, body in
                !Set(body["channels"]?.arrayValue?.compactMap(\.stringValue) ?? []).isDisjoint(with: channels)
            }.keys)
        }
    }

    @Test(arguments: [UInt64(1), 2])
    func everyUserSeesExactlyWhatTheRulesAllow(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let channelNames = (0..<8).map { "c\($0)" }
        let users = (0..<8).map { "u\($0)" }
        let roleNames = ["r0", "r1", "r2"]
        func pick(_ names: [String], _ range: ClosedRange<Int>) -> [String] {
            Array(names.shuffled(using: &random).prefix(random.int(range)))
        }
        var model = Model()
        var userConfig: [String: JSON] = [:]
        for user in users {
            let channels = pick(channelNames, 0...2), roles = pick(roleNames + ["ghost"], 0...2)
            model.userChannels[user] = Set(channels)
            model.userRoles[user] = Set(roles)
            userConfig[user] = ["password": "pw", "admin_channels": .array(channels.map { .string($0) }), "admin_roles": .array(roles.map { .string($0) })]
        }
        var roleConfig: [String: JSON] = [:]
        for role in roleNames {
            let channels = pick(channelNames, 0...2)
            model.roleChannels[role] = Set(channels)
            roleConfig[role] = ["admin_channels": .array(channels.map { .string($0) })]
        }
        let node = try await TestNode.start { configuration in
            configuration.passwordIterations = 1000
            configuration.databases[0].sync = Self.sync
            configuration.databases[0].users = userConfig
            configuration.databases[0].roles = roleConfig
        }
        defer { Task { await node.stop() } }

        var docs: [JSON] = []
        for index in 0..<150 {
            var body: [String: JSON] = ["_id": .string("d\(index)"), "channels": .array(pick(channelNames, 0...3).map { .string($0) })]
            if random.chance(0.15) {
                let grantee = random.chance(0.7) ? users.randomElement(using: &random)! : "role:\(roleNames.randomElement(using: &random)!)"
                body["grants"] = [grantee: .array(pick(channelNames, 1...2).map { .string($0) })]
            }
            if random.chance(0.05) {
                body["roles"] = [users.randomElement(using: &random)!: .array(pick(roleNames, 1...1).map { .string($0) })]
            }
            docs.append(.object(body))
            model.docs["d\(index)"] = body
        }
        let saved = try await node.request("POST", "/db/_bulk_docs", json: ["docs": .array(docs)], admin: true)
        #expect(saved.status == 201)

        try await checkViews(node, model, users: users, blipUsers: Array(users.prefix(3)))

        // Revoke: every granting document drops its grants and role assignments.
        for (id, body) in model.docs where body["grants"] != nil || body["roles"] != nil {
            let rev = try #require(try await node.request("GET", "/db/\(id)", admin: true).json["_rev"]?.stringValue)
            var changed = body
            changed.removeValue(forKey: "grants")
            changed.removeValue(forKey: "roles")
            changed["_rev"] = .string(rev)
            #expect(try await node.request("PUT", "/db/\(id)", json: .object(changed), admin: true).status == 201)
            changed.removeValue(forKey: "_rev")
            model.docs[id] = changed
        }
        try await checkViews(node, model, users: users, blipUsers: [])
    }

    func checkViews(_ node: TestNode, _ model: Model, users: [String], blipUsers: [String]) async throws {
        for user in users {
            let expected = model.visible(to: user)
            let headers = TestNode.basic(user, "pw")
            let all = try await node.request("GET", "/db/_all_docs", headers: headers)
            let listed = Set(all.json["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [])
            #expect(listed == expected, "\(user) _all_docs: leaked \(listed.subtracting(expected).sorted()), missing \(expected.subtracting(listed).sorted())")
            let feed = try await node.request("GET", "/db/_changes", headers: headers)
            let changed = Set(feed.json["results"]?.arrayValue?.filter { $0["removed"] == nil }.compactMap { $0["id"]?.stringValue } ?? [])
            #expect(changed == expected, "\(user) _changes: leaked \(changed.subtracting(expected).sorted()), missing \(expected.subtracting(changed).sorted())")
            for id in ["d0", "d1", "d2", "d3", "d4"] {
                let status = try await node.request("GET", "/db/\(id)", headers: headers).status
                #expect(status == (expected.contains(id) ? 200 : 403), "\(user) GET \(id)")
            }
        }
        for user in blipUsers {
            let client = try await TestNode.start()
            _ = try await client.request("PUT", "/db/_replication/pull", json: [
                "remote": .string("ws://127.0.0.1:\(node.ports.publicPort)/db"), "direction": "pull",
                "remote_username": .string(user), "remote_password": "pw",
            ], admin: true)
            let done = try await eventually {
                try await client.request("GET", "/db/_replicationStatus/pull", admin: true).json["status"] == "stopped"
            }
            #expect(done)
            let pulled = Set(try await client.request("GET", "/db/_all_docs", admin: true).json["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [])
            let expected = model.visible(to: user)
            #expect(pulled == expected, "\(user) BLIP pull: leaked \(pulled.subtracting(expected).sorted()), missing \(expected.subtracting(pulled).sorted())")
            await client.stop()
        }
    }
}
