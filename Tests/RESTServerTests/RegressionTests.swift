import DocumentModel
import Testing
import TestSupport

/// Behaviours that were once wrong.
@Suite struct RegressionTests {
    @Test func headReportsTheGetLength() async throws {
        try await withNode { node in
            _ = try await node.request("PUT", "/db/a", json: ["x": "some text"])
            let get = try await node.request("GET", "/db/a")
            let head = try await node.request("HEAD", "/db/a")
            #expect(head.headers["content-length"] == String(get.body.count))
        }
    }

    @Test func postRejectsNonStringID() async throws {
        try await withNode { node in
            try await node.request("POST", "/db/", json: ["_id": 42]).expectError(400, "bad_request")
            try await node.request("POST", "/db/_bulk_docs", json: ["docs": [], "new_edits": "false"]).expectError(400, "bad_request")
            try await node.request("POST", "/db/_all_docs", json: ["keys": [1]]).expectError(400, "bad_request")
        }
    }

    @Test func purgeSequenceCountsEffectivePurges() async throws {
        try await withNode { node in
            _ = try await node.request("PUT", "/db/a", json: [:])
            _ = try await node.request("POST", "/db/_purge", json: ["zz": ["*"]], admin: true)
            #expect(try await node.request("GET", "/db/").json["purge_seq"] == 0)
            let purged = try await node.request("POST", "/db/_purge", json: ["a": ["*"]], admin: true)
            #expect(purged.json["purge_seq"] == 1)
            #expect(try await node.request("GET", "/db/").json["purge_seq"] == 1)
        }
    }

    @Test func filteredFeedsContinueFromTheDatabaseSequence() async throws {
        try await withNode { node in
            _ = try await node.request("PUT", "/db/a", json: [:])
            _ = try await node.request("PUT", "/db/b", json: [:])
            let filtered = try await node.request("GET", "/db/_changes?filter=_doc_ids&doc_ids=%5B%22a%22%5D&heartbeat=true")
            #expect(filtered.status == 200)
            #expect(filtered.json["last_seq"] == 2)
        }
    }

    @Test func bulkGetWithoutRevReturnsOnlyTheWinner() async throws {
        try await withNode(conflicts: ConflictPolicy.none) { node in
            _ = try await node.request("PUT", "/db/d?new_edits=false", json: ["_rev": "1-aaaa"])
            _ = try await node.request("PUT", "/db/d?new_edits=false", json: ["_rev": "1-bbbb"])
            let bulk = try await node.request("POST", "/db/_bulk_get", json: ["docs": [["id": "d"]]])
            #expect(bulk.json["results"]?[0]?["docs"]?.arrayValue?.count == 1)
            #expect(bulk.json["results"]?[0]?["docs"]?[0]?["ok"]?["_rev"] == "1-bbbb")
        }
    }

    @Test func attachmentOnRecreatedDocumentHasItsGeneration() async throws {
        try await withNode { node in
            let rev1 = try #require(try await node.request("PUT", "/db/d", json: [:]).rev)
            _ = try await node.request("DELETE", "/db/d?rev=\(rev1)")
            let put = try await node.request("PUT", "/db/d/a.txt", raw: Array("x".utf8), headers: ["Content-Type": "text/plain"])
            #expect(put.rev?.hasPrefix("3-") == true)
            #expect(try await node.request("GET", "/db/d").json["_attachments"]?["a.txt"]?["revpos"] == 3)
        }
    }

    @Test func localDocumentsAcceptIfMatch() async throws {
        try await withNode { node in
            _ = try await node.request("PUT", "/db/_local/x", json: ["a": 1])
            #expect(try await node.request("PUT", "/db/_local/x", json: ["a": 2], headers: ["If-Match": "\"0-1\""]).rev == "0-2")
            #expect(try await node.request("DELETE", "/db/_local/x", headers: ["If-Match": "0-2"]).status == 200)
        }
    }
}
