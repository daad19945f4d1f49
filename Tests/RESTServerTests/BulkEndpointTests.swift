import DocumentModel
import Testing
import TestSupport

@Suite struct BulkEndpointTests {
    @Test func bulkDocsReportsEachDocument() async throws {
        try await withNode { node in
            let response = try await node.request("POST", "/db/_bulk_docs", json: [
                "docs": [
                    ["type": "task-list", "name": "Groceries"],
                    ["_id": "named", "x": 1],
                    ["_id": "_bad"],
                    ["_id": "named", "x": 2],
                    "not an object",
                    ["_id": "u", "_private": 1],
                ],
            ])
            #expect(response.status == 201)
            let results = try #require(response.json.arrayValue)
            #expect(results.count == 6)
            #expect(results[0]["id"]?.stringValue?.count == 32)
            #expect(results[0]["rev"]?.stringValue?.hasPrefix("1-") == true)
            #expect(results[1]["id"] == "named")
            #expect(results[2]["status"] == 400)
            #expect(results[3]["error"] == "conflict")
            #expect(results[3]["status"] == 409)
            #expect(results[4]["status"] == 400)
            #expect(results[5]["error"] == "bad_request")
            #expect(try await node.request("GET", "/db/").json["doc_count"] == 2)
            try await node.request("POST", "/db/_bulk_docs", json: ["nodocs": []]).expectError(400, "bad_request")
        }
    }

    @Test func bulkDocsWithNewEditsFalseKeepsConflicts() async throws {
        // Policy none: the conflict stays for the client to resolve (CouchDB behaviour).
        try await withNode(conflicts: ConflictPolicy.none) { node in
            let response = try await node.request("POST", "/db/_bulk_docs", json: [
                "new_edits": false,
                "docs": [
                    ["_id": "d", "_rev": "1-aaaa", "v": 0],
                    ["_id": "d", "_revisions": ["start": 2, "ids": ["bbbb", "aaaa"]], "v": 1],
                    ["_id": "d", "_revisions": ["start": 2, "ids": ["cccc", "aaaa"]], "v": 2],
                    ["_id": "d", "_rev": "2-bbbb", "v": 1],
                    ["_rev": "1-aaaa"],
                ],
            ])
            let results = try #require(response.json.arrayValue)
            #expect(results[0]["rev"] == "1-aaaa")
            #expect(results[3]["rev"] == "2-bbbb")
            #expect(results[4]["status"] == 400)
            let doc = try await node.request("GET", "/db/d?conflicts=true")
            #expect(doc.json["_rev"] == "2-cccc")
            #expect(doc.json["_conflicts"] == ["2-bbbb"])
        }
    }

    @Test func bulkGetAndRevsDiff() async throws {
        try await withNode { node in
            let rev1 = try #require(try await node.request("PUT", "/db/a", json: ["v": 1]).rev)
            let rev2 = try #require(try await node.request("PUT", "/db/a", json: ["_rev": .string(rev1), "v": 2]).rev)
            let bulk = try await node.request("POST", "/db/_bulk_get?revs=true", json: [
                "docs": [["id": "a", "rev": .string(rev1)], ["id": "a"], ["id": "zz"], ["id": "a", "rev": "9-dead"], ["x": 1]],
            ])
            #expect(bulk.status == 200)
            let results = try #require(bulk.json["results"]?.arrayValue)
            #expect(results[0]["docs"]?[0]?["ok"]?["v"] == 1)
            #expect(results[1]["docs"]?[0]?["ok"]?["_rev"] == .string(rev2))
            #expect(results[1]["docs"]?[0]?["ok"]?["_revisions"]?["start"] == 2)
            #expect(results[2]["docs"]?[0]?["error"]?["error"] == "not_found")
            #expect(results[3]["docs"]?[0]?["error"]?["rev"] == "9-dead")
            #expect(results[4]["docs"]?[0]?["error"] != nil)
            let latest = try await node.request("POST", "/db/_bulk_get?latest=true", json: ["docs": [["id": "a", "rev": .string(rev1)]]])
            #expect(latest.json["results"]?[0]?["docs"]?[0]?["ok"]?["_rev"] == .string(rev2))

            let diff = try await node.request("POST", "/db/_revs_diff", json: [
                "a": [.string(rev1), .string(rev2), "3-new"], "b": ["1-x"],
            ])
            #expect(diff.json["a"]?["missing"] == ["3-new"])
            #expect(diff.json["a"]?["possible_ancestors"] == [.string(rev2)])
            #expect(diff.json["b"]?["missing"] == ["1-x"])
            #expect(diff.json["b"]?["possible_ancestors"] == nil)
            try await node.request("POST", "/db/_revs_diff", json: ["a": "nope"]).expectError(400, "bad_request")
            try await node.request("POST", "/db/_revs_diff", json: ["a": ["bad rev"]]).expectError(400, "bad_request")
        }
    }
}
