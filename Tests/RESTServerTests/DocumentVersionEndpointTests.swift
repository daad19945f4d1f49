import DocumentModel
import Testing
import TestSupport

/// The current version (`cv`, `_cv`) in the document API, as Sync Gateway 4 shows it.
@Suite struct DocumentVersionEndpointTests {
    @Test func writesAnswerTheCurrentVersionAndReadsShowItOnRequest() async throws {
        try await withNode { node in
            let created = try await node.request("PUT", "/db/doc", json: ["name": "a"])
            #expect(created.status == 201)
            let cv1 = try Version(parsing: try #require(created.json["cv"]?.stringValue))
            #expect(!cv1.isLegacy)

            // A single document shows `_cv` unless show_cv=false (see docs/rest-api.md);
            // the readers replicators use only with show_cv=true.
            #expect(try await node.request("GET", "/db/doc?show_cv=false").json["_cv"] == nil)
            let all = try await node.request("GET", "/db/_all_docs?include_docs=true")
            #expect(all.json["rows"]?.arrayValue?.first?["doc"]?["_cv"] == nil, "\(all)")
            let openRevs = try await node.request("GET", "/db/doc?open_revs=all")
            #expect(openRevs.json.arrayValue?.first?["ok"]?["_cv"] == nil, "\(openRevs)")
            let read = try await node.request("GET", "/db/doc")
            #expect(read.json["_cv"]?.stringValue == cv1.description)

            // A body read with `_cv` can be written back; the new version is newer.
            var body = try #require(read.json.objectValue)
            body["name"] = "b"
            let updated = try await node.request("PUT", "/db/doc", json: .object(body))
            #expect(updated.status == 201)
            let cv2 = try Version(parsing: try #require(updated.json["cv"]?.stringValue))
            #expect(cv2.source == cv1.source)
            #expect(cv2.time > cv1.time)
            #expect(try await node.request("GET", "/db/doc?show_cv=true&rev=\(created.rev!)").json["_cv"]?.stringValue
                == cv1.description)

            let deleted = try await node.request("DELETE", "/db/doc?rev=\(updated.rev!)")
            #expect(try Version(parsing: try #require(deleted.json["cv"]?.stringValue)).time > cv2.time)
        }
    }

    @Test func bulkDocsResultsCarryTheCurrentVersion() async throws {
        try await withNode { node in
            let response = try await node.request("POST", "/db/_bulk_docs", json: [
                "docs": [["_id": "local", "x": 1]],
            ])
            let local = try #require(response.json.arrayValue?.first)
            #expect(try Version(parsing: try #require(local["cv"]?.stringValue)).isLegacy == false)

            // new_edits=false: the revision's legacy version.
            let rev = "1-0123456789abcdef0123456789abcdef01234567"
            let replicated = try await node.request("POST", "/db/_bulk_docs", json: [
                "new_edits": false, "docs": [["_id": "old", "_rev": .string(rev), "x": 1]],
            ])
            let entry = try #require(replicated.json.arrayValue?.first)
            #expect(entry["cv"]?.stringValue == Version.legacy(revID: RevID(rev)!).description)
            #expect(try await node.request("GET", "/db/old?show_cv=true").json["_cv"] == entry["cv"])
        }
    }
}
