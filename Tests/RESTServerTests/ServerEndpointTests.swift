import DocumentModel
import Testing
import TestSupport

@Suite struct ServerEndpointTests {
    @Test func welcomeAndDatabaseInfo() async throws {
        try await withNode { node in
            let welcome = try await node.request("GET", "/")
            #expect(welcome.status == 200)
            #expect(welcome.json["couchdb"] == "Welcome")
            #expect(welcome.json["vendor"]?["name"] == "Shoal")
            #expect(welcome.json["ADMIN"] == nil)
            #expect(try await node.request("GET", "/", admin: true).json["ADMIN"] == true)
            #expect(try await node.request("GET", "/_all_dbs").json == ["db"])

            _ = try await node.request("PUT", "/db/a", json: ["x": 1])
            let info = try await node.request("GET", "/db/")
            #expect(info.status == 200)
            #expect(info.json["db_name"] == "db")
            #expect(info.json["doc_count"] == 1)
            #expect(info.json["update_seq"] == 1)
            #expect(info.json["state"] == "Online")
            #expect(try await node.request("GET", "/db").json["db_name"] == "db")
        }
    }

    @Test func unknownDatabaseAndMethods() async throws {
        try await withNode { node in
            try await node.request("GET", "/nope/").expectError(404, "not_found")
            try await node.request("GET", "/nope/doc").expectError(404, "not_found")
            try await node.request("DELETE", "/").expectError(405, "method_not_allowed")
            try await node.request("PATCH", "/db/doc", json: [:]).expectError(405, "method_not_allowed")
            try await node.request("GET", "/db/_bulk_docs").expectError(405, "method_not_allowed")
            try await node.request("GET", "/db/_unknown").expectError(400, "bad_request")
            try await node.request("PUT", "/db/", json: [:]).expectError(412, "file_exists")
        }
    }

    @Test func headHasNoBody() async throws {
        try await withNode { node in
            _ = try await node.request("PUT", "/db/a", json: ["x": 1])
            let head = try await node.request("HEAD", "/db/a")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(try await node.request("HEAD", "/db/zzz").status == 404)
        }
    }
}
