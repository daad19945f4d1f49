import DocumentModel
import Testing
import TestSupport

@Suite struct DocumentEndpointTests {
    @Test func createReadUpdateDelete() async throws {
        try await withNode { node in
            let created = try await node.request("PUT", "/db/doc1", json: ["name": "a"])
            #expect(created.status == 201)
            #expect(created.json["ok"] == true)
            #expect(created.json["id"] == "doc1")
            let rev1 = try #require(created.rev)
            #expect(created.headers["etag"] == "\"\(rev1)\"")

            let read = try await node.request("GET", "/db/doc1?show_cv=false")
            #expect(read.status == 200)
            #expect(read.json == ["_id": "doc1", "_rev": .string(rev1), "name": "a"])

            let updated = try await node.request("PUT", "/db/doc1", json: ["_rev": .string(rev1), "name": "b"])
            #expect(updated.status == 201)
            let rev2 = try #require(updated.rev)
            #expect(rev2.hasPrefix("2-"))
            // The old revision is still readable by rev.
            #expect(try await node.request("GET", "/db/doc1?rev=\(rev1)").json["name"] == "a")
            // rev in the query string works too; stale rev conflicts.
            try await node.request("PUT", "/db/doc1?rev=\(rev1)", json: ["name": "c"]).expectError(409, "conflict")
            try await node.request("PUT", "/db/doc1", json: ["name": "c"]).expectError(409, "conflict")

            let deleted = try await node.request("DELETE", "/db/doc1?rev=\(rev2)")
            #expect(deleted.status == 200)
            #expect(deleted.rev?.hasPrefix("3-") == true)
            let gone = try await node.request("GET", "/db/doc1")
            gone.expectError(404, "not_found")
            #expect(gone.json["reason"] == "deleted")
            try await node.request("GET", "/db/never").expectError(404, "not_found")
            #expect(try await node.request("GET", "/db/never").json["reason"] == "missing")
            // The tombstone itself is readable by rev.
            #expect(try await node.request("GET", "/db/doc1?rev=\(deleted.rev!)").json["_deleted"] == true)
            try await node.request("DELETE", "/db/doc1?rev=\(rev2)").expectError(409, "conflict")
            try await node.request("DELETE", "/db/never?rev=1-abc").expectError(409, "conflict")
        }
    }

    @Test func postGeneratesIDs() async throws {
        try await withNode { node in
            let posted = try await node.request("POST", "/db/", json: ["type": "task"])
            #expect(posted.status == 201)
            let id = try #require(posted.json["id"]?.stringValue)
            #expect(id.count == 32)
            #expect(try await node.request("GET", "/db/\(id)").json["type"] == "task")
            let named = try await node.request("POST", "/db/", json: ["_id": "chosen", "x": 1])
            #expect(named.json["id"] == "chosen")
        }
    }

    @Test func badRequestsAreRejectedWithReasons() async throws {
        try await withNode { node in
            try await node.request("PUT", "/db/d", raw: Array("{\"a\":".utf8), headers: ["Content-Type": "application/json"])
                .expectError(400, "bad_request")
            try await node.request("PUT", "/db/d", json: [1, 2]).expectError(400, "bad_request")
            try await node.request("PUT", "/db/d", json: ["_foo": 1]).expectError(400, "bad_request")
            try await node.request("PUT", "/db/d", json: ["_rev": "garbage", "a": 1]).expectError(400, "bad_request")
            try await node.request("PUT", "/db/d", json: ["_id": "other"]).expectError(400, "bad_request")
            try await node.request("PUT", "/db/d", raw: Array("{}".utf8), headers: ["Content-Type": "text/html"])
                .expectError(415, "bad_content_type")
            try await node.request("PUT", "/db/d", raw: [], headers: ["Content-Type": "application/json"])
                .expectError(400, "bad_request")
            try await node.request("GET", "/db/d?rev=nonsense").expectError(400, "bad_request")
            try await node.request("GET", "/db/d?revs=maybe").expectError(400, "bad_request")
            try await node.request("PUT", "/db/_badid", json: [:]).expectError(400, "bad_request")
            #expect(try await node.request("GET", "/db/").json["update_seq"] == 0)
        }
    }

    @Test func oversizeDocumentGets413() async throws {
        try await withNode(maxDocumentSize: 1000) { node in
            try await node.request("PUT", "/db/big", json: ["t": .string(String(repeating: "x", count: 2000))])
                .expectError(413, "too_large")
            #expect(try await node.request("PUT", "/db/small", json: ["t": "x"]).status == 201)
        }
    }

    @Test func conflictsViaNewEditsFalse() async throws {
        // Policy none: the conflict stays for the client to resolve (CouchDB behaviour).
        try await withNode(conflicts: ConflictPolicy.none) { node in
            let rev1 = try #require(try await node.request("PUT", "/db/doc", json: ["v": 0]).rev)
            let digest1 = String(rev1.split(separator: "-")[1])
            let rev2 = try #require(try await node.request("PUT", "/db/doc", json: ["_rev": .string(rev1), "v": 1]).rev)
            let replicated = try await node.request("PUT", "/db/doc?new_edits=false", json: [
                "_rev": "2-ffffffff", "_revisions": ["start": 2, "ids": ["ffffffff", .string(digest1)]], "v": 2,
            ])
            #expect(replicated.status == 201)
            #expect(replicated.rev == "2-ffffffff")
            try await node.request("PUT", "/db/doc?new_edits=false", json: ["v": 3]).expectError(400, "bad_request")
            try await node.request("PUT", "/db/doc?new_edits=false", json: ["_revisions": ["start": 1, "ids": [1]]])
                .expectError(400, "bad_request")

            let winner = try await node.request("GET", "/db/doc?conflicts=true&revs=true&revs_info=true")
            let expectedWinner = max(rev2, "2-ffffffff")
            let loser = min(rev2, "2-ffffffff")
            #expect(winner.json["_rev"] == .string(expectedWinner))
            #expect(winner.json["_conflicts"] == [.string(loser)])
            #expect(winner.json["_revisions"]?["start"] == 2)
            #expect(winner.json["_revisions"]?["ids"]?[1] == .string(digest1))
            #expect(winner.json["_revs_info"]?[0]?["status"] == "available")

            let all = try await node.request("GET", "/db/doc?open_revs=all")
            #expect(all.json.arrayValue?.count == 2)
            let some = try await node.request("GET", "/db/doc?open_revs=%5B%22\(rev1)%22,%223-abc%22%5D")
            #expect(some.json[0]?["ok"]?["v"] == 0)
            #expect(some.json[1]?["missing"] == "3-abc")
            // latest=true follows a revision to its leaf.
            let latest = try await node.request("GET", "/db/doc?rev=\(rev1)&latest=true")
            #expect(latest.json["_rev"] == .string(expectedWinner))

            // Resolve the Couchbase way: delete the loser, update the winner.
            #expect(try await node.request("DELETE", "/db/doc?rev=\(loser)").status == 200)
            let resolved = try await node.request("GET", "/db/doc?conflicts=true&deleted_conflicts=true")
            #expect(resolved.json["_conflicts"] == nil)
            #expect(resolved.json["_deleted_conflicts"]?.arrayValue?.count == 1)
        }
    }

    @Test func ifMatchHeaderNamesTheRevision() async throws {
        try await withNode { node in
            let rev1 = try #require(try await node.request("PUT", "/db/doc", json: ["v": 0]).rev)
            let updated = try await node.request("PUT", "/db/doc", json: ["v": 1], headers: ["If-Match": "\"\(rev1)\""])
            #expect(updated.status == 201)
            try await node.request("PUT", "/db/doc", json: ["_rev": "1-abc", "v": 1], headers: ["If-Match": rev1])
                .expectError(400, "bad_request")
        }
    }

    @Test func designDocumentsAndEncodedIDs() async throws {
        try await withNode { node in
            #expect(try await node.request("PUT", "/db/_design/app", json: ["v": 1]).status == 201)
            #expect(try await node.request("GET", "/db/_design/app").json["_id"] == "_design/app")
            #expect(try await node.request("PUT", "/db/a%2Fb%20c", json: ["v": 1]).status == 201)
            #expect(try await node.request("GET", "/db/a%2Fb%20c").json["_id"] == "a/b c")
            try await node.request("GET", "/db/%zz").expectError(400, "bad_request")
        }
    }
}
