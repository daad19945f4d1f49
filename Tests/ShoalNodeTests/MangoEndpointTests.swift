import DocumentModel
import Foundation
import Testing
import TestSupport

/// `_find`, `_index` and `_explain` over HTTP against a real node.
@Suite struct MangoEndpointTests {
    /// The todo app's documents: 3 lists, 40 tasks (`createdAt` ascending with the index),
    /// every other one complete; tasks of list 2 in channel `list2`, others in `lists`.
    static func todoNode() async throws -> TestNode {
        let node = try await TestNode.start { configuration in
            configuration.passwordIterations = 1000
            configuration.databases[0].users = [:]
        }
        for list in 0..<3 {
            try await node.request("PUT", "/db/list\(list)", json: [
                "type": "task-list", "name": .string("List \(list)"), "channels": ["lists"],
            ], admin: true).expectStatus(201)
        }
        for task in 0..<40 {
            let list = task % 3
            try await node.request("PUT", "/db/task\(task)", json: [
                "type": "task", "taskList": ["id": .string("list\(list)")], "complete": .bool(task % 2 == 0),
                "createdAt": .string(String(format: "2026-11-25T10:%02d:00Z", 59 - task)), "n": .int(Int64(task)),
                "channels": .array([.string(list == 2 ? "list2" : "lists")]),
            ], admin: true).expectStatus(201)
        }
        return node
    }

    static func find(_ node: TestNode, _ body: String, admin: Bool = true, headers: [String: String] = [:]) async throws -> HTTPResult {
        try await node.request("POST", "/db/_find", raw: Array(body.utf8), headers: ["Content-Type": "application/json"].merging(headers) { $1 }, admin: admin)
    }

    @Test func findUsesAnIndexSortsPagesAndExplains() async throws {
        let node = try await Self.todoNode()
        defer { Task { await node.stop() } }
        let query = #"{"selector": {"type": "task", "complete": false}, "sort": [{"createdAt": "asc"}], "limit": 5, "fields": ["_id", "createdAt"], "execution_stats": true}"#

        // No index on createdAt yet: CouchDB's error for a sort nothing can serve.
        let refused = try await Self.find(node, query)
        refused.expectError(400, "no_usable_index")

        let created = try await node.request("POST", "/db/_index", raw: Array(#"{"index": {"fields": ["type", "createdAt"]}, "name": "type-created", "ddoc": "todo-indexes", "type": "json"}"#.utf8), headers: ["Content-Type": "application/json"], admin: true)
        created.expectStatus(200)
        #expect(created.json["result"] == "created")
        #expect(created.json["id"] == "_design/todo-indexes")
        let again = try await node.request("POST", "/db/_index", raw: Array(#"{"index": {"fields": ["type", "createdAt"]}, "name": "type-created", "ddoc": "todo-indexes"}"#.utf8), headers: ["Content-Type": "application/json"], admin: true)
        #expect(again.json["result"] == "exists")

        let page = try await Self.find(node, query)
        page.expectStatus(200)
        let docs = page.json["docs"]?.arrayValue ?? []
        // Incomplete tasks are the odd ones; createdAt falls as n rises, so ascending is n = 39, 37, …
        #expect(docs.map { $0["_id"]?.stringValue } == ["task39", "task37", "task35", "task33", "task31"])
        #expect(docs.allSatisfy { $0.objectValue?.keys.sorted() == ["_id", "createdAt"] })
        #expect(page.json["warning"] == nil)
        #expect(page.json["execution_stats"]?["results_returned"] == 5)
        // The bookmark continues where the page stopped.
        let bookmark = try #require(page.json["bookmark"]?.stringValue)
        let next = try await Self.find(node, #"{"selector": {"type": "task", "complete": false}, "sort": ["createdAt"], "limit": 5, "bookmark": "\#(bookmark)"}"#)
        #expect(next.json["docs"]?.arrayValue?.map { $0["_id"]?.stringValue } == ["task29", "task27", "task25", "task23", "task21"])
        // Descending, and skip.
        let descending = try await Self.find(node, #"{"selector": {"type": "task", "complete": false}, "sort": [{"type": "desc"}, {"createdAt": "desc"}], "limit": 2, "skip": 1}"#)
        #expect(descending.json["docs"]?.arrayValue?.map { $0["_id"]?.stringValue } == ["task3", "task5"])

        let explained = try await node.request("POST", "/db/_explain", raw: Array(query.utf8), headers: ["Content-Type": "application/json"], admin: true)
        #expect(explained.json["index"]?["name"] == "type-created")
        #expect(explained.json["index"]?["ddoc"] == "_design/todo-indexes")
        #expect(explained.json["dbname"] == "db")

        // The index follows edits: complete task39, and it leaves the result.
        let rev = try #require(try await node.request("GET", "/db/task39", admin: true).json["_rev"]?.stringValue)
        try await node.request("PUT", "/db/task39?rev=\(rev)", json: [
            "type": "task", "complete": true, "createdAt": "2026-11-25T10:20:00Z", "channels": ["lists"],
        ], admin: true).expectStatus(201)
        let after = try await Self.find(node, query)
        #expect(after.json["docs"]?[0]?["_id"] == "task37")

        // The index is a design document in CouchDB's form, which a client may also PUT.
        let ddoc = try await node.request("GET", "/db/_design/todo-indexes", admin: true)
        #expect(ddoc.json["language"] == "query")
        try await node.request("PUT", "/db/_design/by-n", json: [
            "language": "query",
            "views": ["n": ["map": ["fields": ["n": "asc"]], "reduce": "_count", "options": ["def": ["fields": ["n"]]]]],
        ], admin: true).expectStatus(201)
        let byN = try await Self.find(node, #"{"selector": {"n": {"$gt": 37}}, "use_index": "by-n"}"#)
        #expect(byN.json["docs"]?.arrayValue?.compactMap { $0["_id"]?.stringValue } == ["task38"])   // task39 lost its n when it was completed above
        #expect(byN.json["warning"] == nil, "\(byN)")
        try await node.request("DELETE", "/db/_index/by-n/json/n", admin: true).expectStatus(200)

        // Listing and deleting indexes.
        let listed = try await node.request("GET", "/db/_index", admin: true).json
        #expect(listed["total_rows"] == 2)
        #expect(listed["indexes"]?[1]?["def"]?["fields"] == [["type": "asc"], ["createdAt": "asc"]])
        try await node.request("DELETE", "/db/_index/_design/todo-indexes/json/type-created", admin: true).expectStatus(200)
        try await node.request("DELETE", "/db/_index/todo-indexes/json/type-created", admin: true).expectStatus(404)
        #expect(try await node.request("GET", "/db/_index", admin: true).json["total_rows"] == 1)
    }

    @Test func findWithoutAnIndexScansAndWarns() async throws {
        let node = try await Self.todoNode()
        defer { Task { await node.stop() } }
        let result = try await Self.find(node, #"{"selector": {"n": {"$gte": 10, "$lt": 14}}, "limit": 100}"#)
        result.expectStatus(200)
        #expect(result.json["docs"]?.arrayValue?.compactMap { $0["_id"]?.stringValue } == ["task10", "task11", "task12", "task13"])
        #expect(result.json["warning"]?.stringValue == "No matching index found, create an index to optimize query time.")
        // An _id sort is served by _all_docs.
        let byID = try await Self.find(node, #"{"selector": {"type": "task-list"}, "sort": [{"_id": "desc"}]}"#)
        #expect(byID.json["docs"]?.arrayValue?.compactMap { $0["_id"]?.stringValue } == ["list2", "list1", "list0"])
        // Bad requests.
        try await Self.find(node, #"{"selector": {"n": {"$bad": 1}}}"#).expectError(400, "invalid_operator")
        try await Self.find(node, #"{"fields": ["a"]}"#).expectError(400, "missing_required_key")
        try await Self.find(node, #"{"selector": {}, "limit": -1}"#).expectError(400, "bad_request")
        try await Self.find(node, "not json").expectStatus(400)
        try await node.request("GET", "/db/_find", admin: true).expectStatus(405)
    }

    @Test func usersFindOnlyWhatTheyMayRead() async throws {
        let node = try await Self.todoNode()
        defer { Task { await node.stop() } }
        try await node.request("PUT", "/db/_user/alice", json: ["password": "pass", "admin_channels": ["lists"]], admin: true).expectStatus(201)
        let all = try await Self.find(node, #"{"selector": {"type": "task"}, "limit": 100}"#)
        #expect(all.json["docs"]?.arrayValue?.count == 40)
        let alice = try await Self.find(node, #"{"selector": {"type": "task"}, "limit": 100}"#, admin: false, headers: TestNode.basic("alice", "pass"))
        alice.expectStatus(200)
        let ids = alice.json["docs"]?.arrayValue?.compactMap { $0["n"]?.intValue } ?? []
        #expect(ids.count == 27)   // tasks of lists 0 and 1 only
        #expect(ids.allSatisfy { $0 % 3 != 2 })
        // Creating indexes is for administrators.
        try await node.request("POST", "/db/_index", raw: Array(#"{"index": {"fields": ["n"]}}"#.utf8),
                               headers: ["Content-Type": "application/json"].merging(TestNode.basic("alice", "pass")) { $1 })
            .expectStatus(403)
    }
}
