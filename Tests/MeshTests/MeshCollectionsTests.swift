import DocumentModel
import Foundation
import ShoalNode
import Testing
import TestSupport

/// Mesh links replicate every collection two nodes share, each through its own sync
/// function, and leave out the collections one of them lacks.
@Suite struct MeshCollectionsTests {
    /// `lists` routes to `list.<owner>` and needs an owner; `app.tasks` routes to
    /// `task.<list>` and needs a title. Node C has only `lists`.
    static func config(withTasks: Bool) -> String {
        let tasks = withTasks ? """
            , "app": {"collections": {"tasks": {"sync": `function(doc) { if (!doc._deleted && !doc.title) throw({forbidden: "tasks need a title"}); channel("task." + doc.list); }`}}}
            """ : ""
        return """
            {"databases": {"todo": {"server": "walrus:",
              "users": {"GUEST": {"disabled": false, "admin_channels": ["*"]}},
              "scopes": {
              "_default": {"collections": {"lists": {"sync": `function(doc, oldDoc) { if (!doc._deleted && !doc.owner) throw({forbidden: "lists need an owner"}); channel("list." + doc.owner); }`}}}
              \(tasks)
            }}}}
            """
    }

    static func start(withTasks: Bool, peers: [TestNode] = []) async throws -> TestNode {
        let loaded = try ConfigLoader.load(text: config(withTasks: withTasks))
        return try await TestNode.start { configuration in
            configuration.databases = loaded.configuration.databases
            configuration.heartbeat = .milliseconds(500)
            configuration.peers = peers.map { "ws://127.0.0.1:\($0.ports.publicPort)/todo" }
        }
    }

    static func rows(_ node: TestNode, _ keyspace: String) async throws -> Int {
        try await node.request("GET", "/\(keyspace)/_all_docs", admin: true).json["total_rows"]?.intValue.map(Int.init) ?? -1
    }

    @Test func twoCollectionsWithDifferentSyncFunctionsConverge() async throws {
        let b = try await Self.start(withTasks: true)
        let c = try await Self.start(withTasks: false)
        let a = try await Self.start(withTasks: true, peers: [b, c])
        defer { Task { for node in [a, b, c] { await node.stop() } } }
        let nodes = [a, b, c]
        for (index, node) in nodes.enumerated() {
            for doc in 0..<5 {
                let list = try await node.request(
                    "PUT", "/todo.lists/n\(index)-\(doc)", json: ["owner": .string("u\(index)")], admin: true)
                #expect(list.status == 201, "\(list)")
                let plain = try await node.request("PUT", "/todo/d\(index)-\(doc)", json: ["n": .int(Int64(doc))], admin: true)
                #expect(plain.status == 201)
            }
            guard index < 2 else { continue }
            for doc in 0..<4 {
                let task = try await node.request(
                    "PUT", "/todo.app.tasks/t\(index)-\(doc)", json: ["title": "do it", "list": .string("n\(index)-0")],
                    admin: true)
                #expect(task.status == 201, "\(task)")
            }
        }
        // Each collection converges on its own: 15 lists and 15 default documents
        // everywhere, 8 tasks on A and B (C has no tasks collection, and its links work).
        let converged = try await eventually {
            for node in nodes {
                guard try await Self.rows(node, "todo.lists") == 15, try await Self.rows(node, "todo") == 15 else { return false }
            }
            let tasksA = try await Self.rows(a, "todo.app.tasks")
            let tasksB = try await Self.rows(b, "todo.app.tasks")
            return tasksA == 8 && tasksB == 8
        }
        #expect(converged)
        #expect(try await c.request("GET", "/todo.app.tasks/", admin: true).status == 404)
        // Nothing crossed collections.
        #expect(try await b.request("GET", "/todo/n2-0", admin: true).status == 404)
        #expect(try await b.request("GET", "/todo.lists/t0-0", admin: true).status == 404)
        // Each replicated document went through its collection's sync function on arrival.
        let list = try await b.request("GET", "/todo.lists/_raw/n2-1", admin: true).json
        #expect(list["_sync"]?["channels"]?.objectValue?.keys.sorted() == ["list.u2"], "\(list)")
        let task = try await b.request("GET", "/todo.app.tasks/_raw/t0-1", admin: true).json
        #expect(task["_sync"]?["channels"]?.objectValue?.keys.sorted() == ["task.n0-0"], "\(task)")
        // Same revision IDs on every node.
        let revs = try await nodes.asyncMap { try await $0.request("GET", "/todo.lists/n1-3", admin: true).json["_rev"] }
        #expect(Set(revs.compactMap { $0?.stringValue }).count == 1)

        // A later edit travels too, in its collection only.
        let rev = try #require(try await a.request("GET", "/todo.app.tasks/t0-2", admin: true).json["_rev"]?.stringValue)
        #expect(try await a.request(
            "PUT", "/todo.app.tasks/t0-2?rev=\(rev)", json: ["title": "done", "list": "n0-0"], admin: true).status == 201)
        #expect(try await eventually {
            try await b.request("GET", "/todo.app.tasks/t0-2", admin: true).json["title"] == "done"
        })
    }

    /// A named replication syncs the collections its `collections` names, and fails
    /// clearly when the remote lacks one.
    @Test func namedReplicationOfCollections() async throws {
        let source = try await Self.start(withTasks: true)
        let target = try await Self.start(withTasks: true)
        let partial = try await Self.start(withTasks: false)
        defer { Task { for node in [source, target, partial] { await node.stop() } } }
        for doc in 0..<3 {
            _ = try await source.request("PUT", "/todo.lists/l\(doc)", json: ["owner": "x"], admin: true)
            _ = try await source.request("PUT", "/todo.app.tasks/t\(doc)", json: ["title": "x", "list": "l0"], admin: true)
            _ = try await source.request("PUT", "/todo/d\(doc)", json: ["n": 1], admin: true)
        }
        let put = try await source.request("PUT", "/todo/_replication/tasks-only", json: [
            "remote": .string("http://127.0.0.1:\(target.ports.publicPort)/todo"), "direction": "push",
            "collections": ["app.tasks"],
        ], admin: true)
        #expect(put.status == 200 || put.status == 201, "\(put)")
        let pushed = try await eventually { try await Self.rows(target, "todo.app.tasks") == 3 }
        let status = try await source.request("GET", "/todo/_replicationStatus/tasks-only", admin: true)
        #expect(pushed, "\(status)")
        #expect(try await Self.rows(target, "todo.lists") == 0)
        #expect(try await Self.rows(target, "todo") == 0)

        let missing = try await source.request("PUT", "/todo/_replication/to-partial", json: [
            "remote": .string("http://127.0.0.1:\(partial.ports.publicPort)/todo"), "direction": "push",
            "collections": ["lists", "app.tasks"],
        ], admin: true)
        #expect(missing.status == 200 || missing.status == 201, "\(missing)")
        #expect(try await eventually {
            let status = try await source.request("GET", "/todo/_replicationStatus/to-partial", admin: true).json
            return status["status"] == "error"
                && status["error_message"]?.stringValue?.contains("Collection 'app.tasks' is not found on the remote server") == true
        })
        let unknown = try await source.request("PUT", "/todo/_replication/bad", json: [
            "remote": .string("http://127.0.0.1:\(partial.ports.publicPort)/todo"), "collections": ["nope"],
        ], admin: true)
        #expect(unknown.status == 400 || unknown.status == 404, "\(unknown)")
    }
}
