import DocumentModel
import Testing
import TestSupport

@Suite struct LocalAndMaintenanceEndpointTests {
    @Test func localDocuments() async throws {
        try await withNode { node in
            let put = try await node.request("PUT", "/db/_local/cp", json: ["seq": 3])
            #expect(put.status == 201)
            #expect(put.rev == "0-1")
            let get = try await node.request("GET", "/db/_local/cp")
            #expect(get.json == ["_id": "_local/cp", "_rev": "0-1", "seq": 3])
            try await node.request("PUT", "/db/_local/cp", json: ["seq": 4]).expectError(409, "conflict")
            #expect(try await node.request("PUT", "/db/_local/cp", json: ["_rev": "0-1", "seq": 4]).rev == "0-2")
            #expect(try await node.request("GET", "/db/_changes").json["results"] == [])
            try await node.request("DELETE", "/db/_local/cp?rev=0-1").expectError(409, "conflict")
            #expect(try await node.request("DELETE", "/db/_local/cp?rev=0-2").status == 200)
            try await node.request("GET", "/db/_local/cp").expectError(404, "not_found")
            try await node.request("GET", "/db/_local/").expectError(404, "not_found")
        }
    }

    @Test func compactAndPurge() async throws {
        try await withNode { node in
            let rev1 = try #require(try await node.request("PUT", "/db/a", json: ["v": 1]).rev)
            _ = try await node.request("PUT", "/db/a", json: ["_rev": .string(rev1), "v": 2])
            let compacted = try await node.request("POST", "/db/_compact", admin: true)
            #expect(compacted.status == 200)
            #expect(compacted.json["revs"] == 1)
            try await node.request("GET", "/db/a?rev=\(rev1)").expectError(404, "not_found")

            _ = try await node.request("PUT", "/db/b", json: ["v": 1])
            let purged = try await node.request("POST", "/db/_purge", json: ["b": ["*"], "zz": ["*"]], admin: true)
            #expect(purged.status == 200)
            #expect(purged.json["purged"]?["b"]?.arrayValue?.count == 1)
            #expect(purged.json["purged"]?["zz"] == nil)
            try await node.request("GET", "/db/b").expectError(404, "not_found")
            try await node.request("POST", "/db/_purge", json: ["b": "x"], admin: true).expectError(400, "bad_request")
            try await node.request("GET", "/db/_compact", admin: true).expectError(405, "method_not_allowed")
            // Maintenance is for administrators, as in Sync Gateway.
            try await node.request("POST", "/db/_compact").expectError(403, "forbidden")
            try await node.request("POST", "/db/_purge", json: ["a": ["*"]]).expectError(403, "forbidden")
        }
    }
}
