import DocumentModel
import DocumentStore
import Foundation
import ShoalNode
import Testing
import TestSupport

/// Sync Gateway 3 scopes and collections over REST: keyspaces, per-collection sync
/// functions, conflict policies, changes feeds and `collection_access`.
@Suite(.serialized) struct CollectionsRESTTests {
    /// Two named collections of `todo` with different sync functions: `lists` routes to
    /// `list.<owner>` and demands an owner; `tasks` (scope `app`) routes to `tasks` and
    /// refuses documents without a `title`.
    static let config = """
        {
          "databases": {
            "todo": {
              "server": "walrus:",
              "users": {
                "alice": {"password": "pass", "admin_channels": ["default-only"],
                          "collection_access": {"_default": {"lists": {"admin_channels": ["list.alice"]}}}}
              },
              "scopes": {
                "_default": {"collections": {
                  "lists": {"sync": `function(doc, oldDoc) { if (!doc._deleted && !doc.owner) throw({forbidden: "lists need an owner"}); channel("list." + (doc.owner || oldDoc.owner)); }`}
                }},
                "app": {"collections": {
                  "tasks": {"sync": `function(doc) { if (!doc._deleted && !doc.title) throw({forbidden: "tasks need a title"}); channel("tasks"); }`,
                            "conflicts": {"default": "none"}}
                }}
              }
            }
          }
        }
        """

    static func start() async throws -> TestNode {
        let loaded = try ConfigLoader.load(text: config)
        #expect(loaded.configuration.databases[0].collections.map(\.name.description) == ["_default.lists", "app.tasks"])
        return try await TestNode.start { configuration in
            configuration.databases = loaded.configuration.databases
            configuration.passwordIterations = 1000
        }
    }

    @Test func scopesConfig() throws {
        let loaded = try ConfigLoader.load(text: """
            {"databases": {"db": {"sync": "function(doc) { channel('old'); }", "scopes": {
              "_default": {"collections": {"_default": {"sync": "function(doc) { channel('new'); }", "conflicts": {"default": "none"}},
                                           "notes": {"import_filter": "function(doc) { return true; }"}}}}}}}
            """)
        let database = loaded.configuration.databases[0]
        #expect(database.sync == "function(doc) { channel('new'); }")
        #expect(database.conflicts.defaultPolicy == .none)
        #expect(database.collections.map(\.name.description) == ["_default.notes"])
        #expect(database.collections.first?.sync == nil)
        #expect(loaded.warnings.contains { $0.contains("collection \"_default.notes\": key \"import_filter\"") }, "\(loaded.warnings)")
        for (bad, reason) in [
            (#"{"_x": {"collections": {"a": {}}}}"#, "invalid collection name \"_x.a\""),
            (#"{"app": {"collections": {"_default": {}}}}"#, "invalid collection name \"app._default\""),
            (#"{"app": {"things": {}}}"#, "scope \"app\" must be an object with a \"collections\" object"),
            (#"{"app": {"collections": {"a": {"sync": 3}}}}"#, "\"sync\" must be a JavaScript function"),
            (#"[]"#, "\"scopes\" must be an object"),
        ] {
            #expect(throws: ConfigLoader.ConfigError.self) { try ConfigLoader.load(text: #"{"databases": {"db": {"scopes": "# + bad + "}}}") }
            do {
                _ = try ConfigLoader.load(text: #"{"databases": {"db": {"scopes": "# + bad + "}}}")
            } catch let error as ConfigLoader.ConfigError {
                #expect(error.message.contains(reason), "\(error.message)")
            }
        }
    }

    @Test func keyspacesServeEachCollection() async throws {
        let node = try await Self.start()
        defer { Task { await node.stop() } }
        // The same document ID in three collections.
        #expect(try await node.request("PUT", "/todo/doc", json: ["in": "default"], admin: true).status == 201)
        #expect(try await node.request("PUT", "/todo.lists/doc", json: ["owner": "alice"], admin: true).status == 201)
        #expect(try await node.request("PUT", "/todo.app.tasks/doc", json: ["title": "t"], admin: true).status == 201)
        #expect(try await node.request("GET", "/todo/doc", admin: true).json["in"] == "default")
        #expect(try await node.request("GET", "/todo._default.lists/doc", admin: true).json["owner"] == "alice")
        #expect(try await node.request("GET", "/todo.app.tasks/doc", admin: true).json["title"] == "t")
        #expect(try await node.request("GET", "/todo._default._default/doc", admin: true).json["in"] == "default")

        // Bulk writes, bulk reads, all_docs, changes, revs_diff, local docs: per collection.
        let bulk = try await node.request(
            "POST", "/todo.lists/_bulk_docs", json: ["docs": [["_id": "l2", "owner": "bob"], ["_id": "bad"]]], admin: true)
        #expect(bulk.json.arrayValue?.first?["rev"] != nil, "\(bulk)")
        #expect(bulk.json.arrayValue?.last?["status"] == 403, "\(bulk)")
        #expect(try await node.request("GET", "/todo.lists/_all_docs", admin: true).json["total_rows"] == 2)
        #expect(try await node.request("GET", "/todo/_all_docs", admin: true).json["total_rows"] == 1)
        let changes = try await node.request("GET", "/todo.lists/_changes", admin: true).json
        #expect(changes["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["doc", "l2"])
        #expect(changes["last_seq"] == 2)
        let taskChanges = try await node.request("GET", "/todo.app.tasks/_changes", admin: true).json
        #expect(taskChanges["results"]?.arrayValue?.count == 1)
        let bulkGet = try await node.request("POST", "/todo.app.tasks/_bulk_get", json: ["docs": [["id": "doc"]]], admin: true)
        #expect(bulkGet.status == 200 && bulkGet.text.contains("\"title\":\"t\""), "\(bulkGet)")
        let diff = try await node.request("POST", "/todo.lists/_revs_diff", json: ["l2": ["1-abc"], "zzz": ["1-def"]], admin: true)
        #expect(diff.json.objectValue?.keys.sorted() == ["l2", "zzz"])
        #expect(try await node.request("PUT", "/todo.lists/_local/cp", json: ["n": 1], admin: true).status == 201)
        #expect(try await node.request("GET", "/todo/_local/cp", admin: true).status == 404)
        #expect(try await node.request("GET", "/todo.lists/_local/cp", admin: true).json["n"] == 1)

        // Attachments.
        let rev = try await node.request("GET", "/todo.app.tasks/doc", admin: true).json["_rev"]!.stringValue!
        let put = try await node.request(
            "PUT", "/todo.app.tasks/doc/note.txt?rev=\(rev)", raw: Array("hello".utf8), headers: ["Content-Type": "text/plain"],
            admin: true)
        #expect(put.status == 201, "\(put)")
        #expect(try await node.request("GET", "/todo.app.tasks/doc/note.txt", admin: true).text == "hello")
        #expect(try await node.request("GET", "/todo/doc/note.txt", admin: true).status == 404)

        // Unknown keyspaces, database-only endpoints.
        let unknown = try await node.request("GET", "/todo.nope/doc", admin: true)
        #expect(unknown.status == 404)
        #expect(unknown.json["reason"] == "keyspace todo.nope not found")
        #expect(try await node.request("GET", "/todo.app.lists/doc", admin: true).status == 404)
        #expect(try await node.request("GET", "/todo.a.b.c/", admin: true).status == 404)
        #expect(try await node.request("GET", "/nodb.lists/", admin: true).json["reason"] == "no such database 'nodb'")
        #expect(try await node.request("GET", "/todo.lists/_user/alice", admin: true).status == 404)
        #expect(try await node.request("GET", "/todo.lists/", admin: true).json["doc_count"] == 2)
        #expect(try await node.request("GET", "/_all_dbs", admin: true).json == ["todo"])

        // The database's config shows its scopes and collections.
        let config = try await node.request("GET", "/todo/_config", admin: true).json
        #expect(config["scopes"]?["_default"]?["collections"]?["lists"]?["sync"]?.stringValue?.contains("lists need an owner") == true)
        #expect(config["scopes"]?["app"]?["collections"]?["tasks"]?["conflicts"]?["default"] == "none")
    }

    /// Design documents, views and Mango indexes are each collection's own: the same
    /// design document in two collections indexes each one's documents, and one
    /// collection's cleanup keeps the other's indexes.
    @Test func viewsAndFindPerCollection() async throws {
        let node = try await Self.start()
        defer { Task { await node.stop() } }
        // Design documents pass the collection's sync function like any other document.
        let design: JSON = ["owner": "admin", "views": ["byOwner": ["map": "function(doc) { if (doc.owner) emit(doc.owner, 1); }", "reduce": "_count"]]]
        for keyspace in ["todo", "todo.lists"] {
            let saved = try await node.request("PUT", "/\(keyspace)/_design/app", json: design, admin: true)
            #expect(saved.status == 201, "\(saved)")
        }
        #expect(try await node.request("PUT", "/todo/d1", json: ["owner": "carol"], admin: true).status == 201)
        for (id, owner) in [("l1", "alice"), ("l2", "alice"), ("l3", "bob")] {
            #expect(try await node.request("PUT", "/todo.lists/\(id)", json: ["owner": .string(owner)], admin: true).status == 201)
        }
        func rows(_ keyspace: String, _ query: String = "reduce=false") async throws -> [String] {
            let answer = try await node.request("GET", "/\(keyspace)/_design/app/_view/byOwner?\(query)", admin: true)
            #expect(answer.status == 200, "\(answer)")
            return answer.json["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        }
        #expect(try await rows("todo.lists") == ["l1", "l2", "l3"])
        #expect(try await rows("todo") == ["d1"])
        let grouped = try await node.request("GET", "/todo._default.lists/_design/app/_view/byOwner?group=true", admin: true).json
        #expect(grouped["rows"] == [["key": "alice", "value": 2], ["key": "bob", "value": 1]])
        #expect(try await node.request("GET", "/todo.app.tasks/_design/app/_view/byOwner", admin: true).status == 404)
        #expect(try await node.request("GET", "/todo.lists/_design_docs", admin: true).json["rows"]?.arrayValue?.count == 1)

        // Mango, with an index per collection.
        // (`_index` adds to a design document that already satisfies the sync function.)
        let ddoc: JSON = ["owner": "admin", "language": "query", "views": [:]]
        #expect(try await node.request("PUT", "/todo.lists/_design/mango", json: ddoc, admin: true).status == 201)
        let made = try await node.request(
            "POST", "/todo.lists/_index", json: ["index": ["fields": ["owner"]], "ddoc": "mango"], admin: true)
        #expect(made.status == 200, "\(made)")
        let found = try await node.request(
            "POST", "/todo.lists/_find", json: ["selector": ["owner": "alice"], "fields": ["_id"]], admin: true)
        #expect(found.json["docs"]?.arrayValue?.compactMap { $0["_id"]?.stringValue } == ["l1", "l2"], "\(found)")
        let inDefault = try await node.request("POST", "/todo/_find", json: ["selector": ["owner": "alice"]], admin: true)
        #expect(inDefault.json["docs"]?.arrayValue?.isEmpty == true, "\(inDefault)")

        // Cleanup in one collection leaves the other's indexes alone.
        let deleted = try await node.request("GET", "/todo.lists/_design/app", admin: true).json["_rev"]!.stringValue!
        #expect(try await node.request("DELETE", "/todo.lists/_design/app?rev=\(deleted)", admin: true).status == 200)
        #expect(try await node.request("POST", "/todo.lists/_view_cleanup", json: [:], admin: true).status == 202)
        #expect(try await node.request("POST", "/todo/_view_cleanup", json: [:], admin: true).status == 202)
        #expect(try await rows("todo", "reduce=false&update=false") == ["d1"])
    }

    /// A channel taken from `collection_access` is a revocation in that collection: a
    /// reader's pull from before it is told the channel was lost.
    @Test func channelsTakenFromCollectionAccessAreRevoked() async throws {
        let node = try await Self.start()
        defer { Task { await node.stop() } }
        #expect(try await node.request("PUT", "/todo.lists/l1", json: ["owner": "alice"], admin: true).status == 201)
        let security = try #require(node.node.security(database: "todo._default.lists"))
        let before = try #require(try await security.user(named: "alice"))
        #expect(try await security.access(for: before).channels.keys.contains("list.alice"))
        let since = try await node.request("GET", "/todo.lists/", admin: true).json["update_seq"]?.intValue ?? 0
        let taken = try await node.request(
            "PUT", "/todo/_user/alice", json: ["collection_access": ["_default": ["lists": ["admin_channels": []]]]], admin: true)
        #expect(taken.status == 200, "\(taken)")
        let after = try #require(try await security.user(named: "alice"))
        let access = try await security.access(for: after)
        #expect(!access.channels.keys.contains("list.alice"))
        let lost = try await security.lostChannels(of: after, access: access, since: UInt64(since))
        #expect(lost == ["list.alice"])
        // The default collection's feed is not told: its channels did not change.
        let inDefault = try #require(node.node.security(database: "todo"))
        #expect(try await inDefault.lostChannels(of: after, access: try await inDefault.access(for: after), since: 0).isEmpty)
    }

    @Test func perCollectionSyncFunctionsAndUserChannels() async throws {
        let node = try await Self.start()
        defer { Task { await node.stop() } }
        let alice = TestNode.basic("alice", "pass")
        let refused = try await node.request("PUT", "/todo.app.tasks/t1", json: ["owner": "alice"], admin: true)
        #expect(refused.status == 403)
        #expect(refused.json["reason"] == "tasks need a title")
        // The lists function does not apply to tasks, nor the tasks function to lists.
        #expect(try await node.request("PUT", "/todo.lists/l1", json: ["owner": "alice", "title": "x"], admin: true).status == 201)
        #expect(try await node.request("PUT", "/todo.lists/l2", json: ["owner": "bob"], admin: true).status == 201)
        #expect(try await node.request("PUT", "/todo/d1", json: ["channels": ["default-only"]], admin: true).status == 201)
        #expect(try await node.request("PUT", "/todo/d2", json: ["channels": ["list.alice"]], admin: true).status == 201)

        // alice reads list.alice in `lists` (collection_access) and default-only in the
        // default collection (admin_channels), and nothing else.
        let lists = try await node.request("GET", "/todo.lists/_changes", headers: alice).json
        #expect(lists["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["l1"])
        let defaults = try await node.request("GET", "/todo/_changes", headers: alice).json
        #expect(defaults["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["d1"])
        #expect(try await node.request("GET", "/todo.lists/l2", headers: alice).status == 403)
        #expect(try await node.request("GET", "/todo.lists/l1", headers: alice).status == 200)
        let user = try await node.request("GET", "/todo/_user/alice", admin: true).json
        #expect(user["collection_access"]?["_default"]?["lists"]?["admin_channels"] == ["list.alice"])

        // A channel given later in `lists` counts from that collection's next sequence:
        // a feed since before it backfills the channel's older documents.
        let since = try #require(lists["last_seq"]?.intValue)
        let grant = try await node.request("PUT", "/todo/_user/alice", json: [
            "collection_access": ["_default": ["lists": ["admin_channels": ["list.alice", "list.bob"]]]],
        ], admin: true)
        #expect(grant.status == 200, "\(grant)")
        let backfilled = try await node.request("GET", "/todo.lists/_changes?since=\(since)", headers: alice).json
        #expect(backfilled["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["l2"], "\(backfilled)")
    }

    /// `access()` grants channels in its own collection; `role()` grants a role of the
    /// database, whose channels count in every collection (Sync Gateway 3).
    @Test func grantsAcrossCollections() async throws {
        let config = """
            {"databases": {"todo": {"server": "walrus:",
              "users": {"bob": {"password": "pass"}},
              "roles": {"editor": {"admin_channels": ["edits"],
                                   "collection_access": {"app": {"tasks": {"admin_channels": ["task-edits"]}}}}},
              "scopes": {"_default": {"collections": {"lists": {"sync": `function(doc) { channel(doc.channels); if (doc.member) { access(doc.member, "list." + doc._id); role(doc.member, "role:editor"); } }`}}},
                         "app": {"collections": {"tasks": {}}}}}}}
            """
        let loaded = try ConfigLoader.load(text: config)
        let node = try await TestNode.start { configuration in
            configuration.databases = loaded.configuration.databases
            configuration.passwordIterations = 1000
        }
        defer { Task { await node.stop() } }
        let bob = TestNode.basic("bob", "pass")
        #expect(try await node.request("PUT", "/todo/e1", json: ["channels": ["edits"]], admin: true).status == 201)
        #expect(try await node.request("PUT", "/todo.app.tasks/t1", json: ["channels": ["task-edits"]], admin: true).status == 201)
        #expect(try await node.request("PUT", "/todo.lists/l2", json: ["channels": ["list.l1"]], admin: true).status == 201)
        #expect(try await node.request("PUT", "/todo/d2", json: ["channels": ["list.l1"]], admin: true).status == 201)
        #expect(try await node.request("GET", "/todo/e1", headers: bob).status == 403)
        #expect(try await node.request("GET", "/todo.app.tasks/t1", headers: bob).status == 403)
        // A list in `lists` makes bob a member: access() to list.l1 there, role editor everywhere.
        #expect(try await node.request("PUT", "/todo.lists/l1", json: ["member": "bob"], admin: true).status == 201)
        #expect(try await node.request("GET", "/todo.lists/l2", headers: bob).status == 200)
        #expect(try await node.request("GET", "/todo/d2", headers: bob).status == 403)
        #expect(try await node.request("GET", "/todo/e1", headers: bob).status == 200)
        #expect(try await node.request("GET", "/todo.app.tasks/t1", headers: bob).status == 200)
    }

    @Test func perCollectionConflictPolicies() async throws {
        let node = try await Self.start()
        defer { Task { await node.stop() } }
        // Two branches in each collection; `tasks` keeps them (policy none), the default
        // collection resolves them (winner).
        for keyspace in ["todo", "todo.app.tasks"] {
            for (rev, title) in [("1-aaaa", "a"), ("1-bbbb", "b")] {
                let put = try await node.request(
                    "PUT", "/\(keyspace)/c?new_edits=false", json: ["_rev": .string(rev), "title": .string(title)], admin: true)
                #expect(put.status == 201, "\(put)")
            }
        }
        #expect(try await eventually {
            let resolved = try await node.request("GET", "/todo/c?conflicts=true", admin: true).json
            return resolved["_conflicts"] == nil
        })
        let kept = try await node.request("GET", "/todo.app.tasks/c?conflicts=true", admin: true).json
        #expect(kept["_conflicts"] == ["1-aaaa"])
    }
}
