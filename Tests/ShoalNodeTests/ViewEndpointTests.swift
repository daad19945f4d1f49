import DocumentModel
import Foundation
import ShoalNode
import Testing
import TestSupport

/// CouchDB views over HTTP on a real node: the todo seed's views, every parameter's
/// success and error paths, design-document validation at PUT, `_design_docs`,
/// `_view_cleanup`, access on the public port, and a runaway map function.
@Suite(.serialized) struct ViewEndpointTests {
    /// The seed's views (000 "Query Documents", "Aggregating Data") in JavaScript. The
    /// count view emits `[listID, taskID]` so that `group_level=1` groups by list.
    static let listDesign: JSON = [
        "language": "javascript",
        "views": [
            "listsByName": ["map": "function(doc) { if (doc.type == 'task-list' && doc.name) { emit(doc.name, null); } }"],
            "incompleteTasksCount": [
                "map": "function(doc) { if (doc.type == 'task' && doc.taskList && !doc.complete) { emit([doc.taskList.id, doc._id], null); } }",
                "reduce": "_count",
            ],
        ],
    ]

    private func rows(_ result: HTTPResult) -> [JSON] { result.json["rows"]?.arrayValue ?? [] }

    @Test func seedScenarioListsByNameAndIncompleteTasksCount() async throws {
        let node = try await TestNode.start(databases: ["todo"])
        defer { Task { await node.stop() } }
        #expect(try await node.request("PUT", "/todo/_design/list", json: Self.listDesign, admin: true).status == 201)
        for (id, name) in [("l1", "Groceries"), ("l2", "Chores"), ("l3", "books")] {
            try await node.request("PUT", "/todo/\(id)", json: ["type": "task-list", "name": .string(name)], admin: true).expectStatus(201)
        }
        var taskRevs: [String: String] = [:]
        for (id, list, complete) in [("t1", "l1", false), ("t2", "l1", false), ("t3", "l1", true), ("t4", "l2", false)] {
            let result = try await node.request(
                "PUT", "/todo/\(id)", json: ["type": "task", "taskList": ["id": .string(list)], "complete": .bool(complete), "task": "x"], admin: true)
            taskRevs[id] = result.rev
        }
        // Names in Unicode collation order (not byte order: "books" before "Chores").
        let byName = try await node.request("GET", "/todo/_design/list/_view/listsByName", admin: true)
        byName.expectStatus(200)
        #expect(rows(byName).map { $0["key"] } == ["books", "Chores", "Groceries"])
        #expect(byName.json["total_rows"] == 3 && byName.json["offset"] == 0)
        #expect(rows(byName)[0] == ["id": "l3", "key": "books", "value": .null])

        let countPath = "/todo/_design/list/_view/incompleteTasksCount?group_level=1"
        let counts = try await node.request("GET", countPath, admin: true)
        #expect(counts.json == ["rows": [["key": ["l1"], "value": 2], ["key": ["l2"], "value": 1]]])
        let total = try await node.request("GET", "/todo/_design/list/_view/incompleteTasksCount", admin: true)
        #expect(total.json == ["rows": [["key": .null, "value": 3]]])

        // Marking a task complete changes the count (incremental update on the next query).
        try await node.request(
            "PUT", "/todo/t1?rev=\(taskRevs["t1"]!)", json: ["type": "task", "taskList": ["id": "l1"], "complete": true, "task": "x"],
            admin: true).expectStatus(201)
        let after = try await node.request("GET", countPath, admin: true)
        #expect(after.json == ["rows": [["key": ["l1"], "value": 1], ["key": ["l2"], "value": 1]]])
        // A deleted task leaves its group; an empty group disappears.
        try await node.request("DELETE", "/todo/t4?rev=\(taskRevs["t4"]!)", admin: true).expectStatus(200)
        let deleted = try await node.request("GET", countPath, admin: true)
        #expect(deleted.json == ["rows": [["key": ["l1"], "value": 1]]])
        // group=true, reduce=false.
        let exact = try await node.request("GET", "/todo/_design/list/_view/incompleteTasksCount?group=true", admin: true)
        #expect(exact.json == ["rows": [["key": ["l1", "t2"], "value": 1]]])
        let map = try await node.request("GET", "/todo/_design/list/_view/incompleteTasksCount?reduce=false", admin: true)
        #expect(rows(map).map { $0["id"] } == ["t2"])
    }

    @Test func queryParameters() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        try await node.request("PUT", "/db/_design/d", json: ["views": ["n": ["map": "function(doc) { emit(doc.n, doc.n * 2); }"]]], admin: true)
            .expectStatus(201)
        for i in 0..<10 { try await node.request("PUT", "/db/doc\(i)", json: ["n": .int(Int64(i))], admin: true).expectStatus(201) }
        let base = "/db/_design/d/_view/n"
        func keys(_ query: String) async throws -> [JSON] {
            let result = try await node.request("GET", base + query, admin: true)
            result.expectStatus(200)
            return rows(result).map { $0["key"] ?? .null }
        }
        #expect(try await keys("?startkey=3&endkey=5") == [3, 4, 5])
        #expect(try await keys("?start_key=3&end_key=5&inclusive_end=false") == [3, 4])
        #expect(try await keys("?startkey=5&endkey=3&descending=true") == [5, 4, 3])
        #expect(try await keys("?limit=2&skip=1") == [1, 2])
        #expect(try await keys("?key=7") == [7])
        #expect(try await keys("?startkey=3&startkey_docid=doc3&endkey=4&endkey_docid=doc3") == [3])
        #expect(try await keys("?keys=%5B9,1,42%5D") == [9, 1])
        #expect(try await keys("?stale=ok&limit=1") == [0])
        #expect(try await keys("?update=lazy&limit=1") == [0])
        let offset = try await node.request("GET", base + "?startkey=4&limit=1&update_seq=true", admin: true)
        #expect(offset.json["offset"] == 4 && offset.json["total_rows"] == 10)
        #expect(offset.json["update_seq"]?.intValue ?? 0 >= 11)
        let posted = try await node.request("POST", base + "?include_docs=true", json: ["keys": [2, 3]], admin: true)
        #expect(rows(posted).map { $0["doc"]?["n"] } == [2, 3])
        #expect(rows(posted).first?["doc"]?["_id"] == "doc2")
        #expect(rows(posted).first?["value"] == 4)

        // CouchDB's errors.
        try await node.request("GET", base + "?limit=-1", admin: true)
            .expectError(400, "query_parse_error", reason: #"Invalid value for positive integer: "-1""#)
        try await node.request("GET", base + "?startkey=5&endkey=3", admin: true).expectError(
            400, "query_parse_error", reason: "No rows can match your key range, reverse your start_key and end_key or set descending=true")
        try await node.request("GET", base + "?group=true", admin: true)
            .expectError(400, "query_parse_error", reason: "Invalid use of grouping on a map view.")
        try await node.request("GET", base + "?descending=maybe", admin: true).expectError(400, "query_parse_error")
        try await node.request("POST", base, json: ["keys": "x"], admin: true).expectError(400, "query_parse_error")
        try await node.request("GET", "/db/_design/nope/_view/n", admin: true).expectError(404, "not_found", reason: "missing")
        try await node.request("GET", "/db/_design/d/_view/nope", admin: true).expectError(404, "not_found", reason: "missing_named_view")
        try await node.request("DELETE", base, admin: true).expectError(405, "method_not_allowed")
    }

    @Test func designDocumentsAreValidatedAtPut() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let syntax = try await node.request("PUT", "/db/_design/bad", json: ["views": ["v": ["map": "function(doc) { emit(doc.x, ; }"]]], admin: true)
        syntax.expectError(400, "compilation_error")
        #expect(syntax.json["reason"]?.stringValue?.contains("SyntaxError") == true, "\(syntax)")
        // ES6 is not ES5.
        try await node.request("PUT", "/db/_design/bad", json: ["views": ["v": ["map": "(doc) => emit(doc.x)"]]], admin: true)
            .expectError(400, "compilation_error")
        try await node.request("PUT", "/db/_design/bad", json: ["views": ["v": ["map": "function(doc) {}", "reduce": "function(k, v { }"]]], admin: true)
            .expectError(400, "compilation_error")
        try await node.request("PUT", "/db/_design/bad", json: ["views": ["v": ["map": "function(doc) {}", "reduce": "_median"]]], admin: true)
            .expectError(400, "bad_request", reason: "Unknown builtin reduce function: _median")
        try await node.request("PUT", "/db/_design/bad", json: ["views": ["v": ["reduce": "_count"]]], admin: true)
            .expectError(400, "bad_request", reason: "View v must have a string `map` function")
        try await node.request("PUT", "/db/_design/bad", json: ["views": "x"], admin: true).expectError(400, "bad_request")
        try await node.request("PUT", "/db/_design/bad", json: ["language": "erlang", "views": [:]], admin: true).expectError(400, "bad_request")
        try await node.request("POST", "/db/_bulk_docs", json: ["docs": [["_id": "_design/b2", "views": ["v": ["map": "nope("]]]]], admin: true)
            .expectStatus(201)
        try await node.request("GET", "/db/_design/b2", admin: true).expectError(404, "not_found")
        // A good one, with a trailing semicolon as CouchDB users write them.
        try await node.request("PUT", "/db/_design/good", json: ["views": ["v": ["map": "function(doc) { emit(doc._id, null); };"]]], admin: true)
            .expectStatus(201)
        try await node.request("PUT", "/db/plain", json: ["a": 1], admin: true).expectStatus(201)
        let designDocs = try await node.request("GET", "/db/_design_docs?include_docs=true", admin: true)
        #expect(rows(designDocs).map { $0["id"] } == ["_design/good"])
        #expect(rows(designDocs).first?["doc"]?["views"] != nil)
        // Design documents are not mapped.
        let result = try await node.request("GET", "/db/_design/good/_view/v", admin: true)
        #expect(rows(result).map { $0["id"] } == ["plain"])
    }

    @Test func cleanupIsForAdminsAndDropsReplacedIndexes() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let first = try await node.request("PUT", "/db/_design/d", json: ["views": ["v": ["map": "function(doc) { emit(1, 1); }"]]], admin: true)
        try await node.request("PUT", "/db/x", json: ["a": 1], admin: true).expectStatus(201)
        #expect(rows(try await node.request("GET", "/db/_design/d/_view/v", admin: true)).first?["key"] == 1)
        try await node.request("PUT", "/db/_design/d?rev=\(first.rev!)", json: ["views": ["v": ["map": "function(doc) { emit(2, 1); }"]]], admin: true)
            .expectStatus(201)
        #expect(rows(try await node.request("GET", "/db/_design/d/_view/v", admin: true)).first?["key"] == 2, "a changed map rebuilds")
        let cleanup = try await node.request("POST", "/db/_view_cleanup", json: [:], admin: true)
        #expect(cleanup.status == 202 && cleanup.json["ok"] == true && cleanup.json["dropped"] == 1, "\(cleanup)")
    }
}
