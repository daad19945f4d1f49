import DocumentModel
import Testing
import TestSupport

@Suite struct AllDocsEndpointTests {
    @Test func allDocsOptions() async throws {
        // Policy none: the conflict stays for the client to resolve (CouchDB behaviour).
        try await withNode(conflicts: ConflictPolicy.none) { node in
            for id in ["a", "b", "c", "d"] { _ = try await node.request("PUT", "/db/\(id)", json: ["id": .string(id)]) }
            let deletedRev = try #require(try await node.request("GET", "/db/d").rev)
            _ = try await node.request("DELETE", "/db/d?rev=\(deletedRev)")
            _ = try await node.request("PUT", "/db/b?new_edits=false", json: ["_rev": "1-ffff", "other": true])

            let all = try await node.request("GET", "/db/_all_docs")
            #expect(all.json["total_rows"] == 3)
            #expect(all.json["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["a", "b", "c"])
            #expect(all.json["rows"]?[0]?["value"]?["rev"]?.stringValue?.hasPrefix("1-") == true)

            let ranged = try await node.request("GET", "/db/_all_docs?startkey=%22b%22&endkey=%22c%22&include_docs=true")
            #expect(ranged.json["rows"]?.arrayValue?.count == 2)
            #expect(ranged.json["rows"]?[1]?["doc"]?["id"] == "c")
            let plainKeys = try await node.request("GET", "/db/_all_docs?start_key=b&limit=1")
            #expect(plainKeys.json["rows"]?.arrayValue?.map { $0["id"] } == ["b"])
            let descending = try await node.request("GET", "/db/_all_docs?descending=true&skip=1")
            #expect(descending.json["rows"]?.arrayValue?.map { $0["id"] } == ["b", "a"])
            #expect(descending.json["offset"] == 1)

            let conflicts = try await node.request("GET", "/db/_all_docs?only_conflicts=true")
            #expect(conflicts.json["rows"]?.arrayValue?.map { $0["id"] } == ["b"])

            let keyed = try await node.request("POST", "/db/_all_docs?include_docs=true", json: ["keys": ["c", "d", "zz"]])
            let rows = try #require(keyed.json["rows"]?.arrayValue)
            #expect(rows[0]["doc"]?["id"] == "c")
            #expect(rows[1]["value"]?["deleted"] == true)
            #expect(rows[1]["doc"] == .null)
            #expect(rows[2]["error"] == "not_found")
            let keysInQuery = try await node.request("GET", "/db/_all_docs?keys=%5B%22a%22%5D")
            #expect(keysInQuery.json["rows"]?.arrayValue?.count == 1)
            try await node.request("GET", "/db/_all_docs?keys=notjson").expectError(400, "bad_request")
            try await node.request("GET", "/db/_all_docs?limit=-1").expectError(400, "bad_request")
        }
    }
}
