import DocumentModel
import Foundation
import Testing
import TestSupport

/// `GET /{db}/_conflicts`, `POST /{db}/{doc}/_resolve`, and the `js` policy end to end.
@Suite struct ConflictEndpointTests {
    /// `doc` in conflict through `new_edits=false` writes: a base and two branches.
    static func makeConflict(_ node: TestNode, _ id: String = "doc", base: JSON, a: JSON, b: JSON) async throws {
        let baseRev = try #require(try await node.request("PUT", "/db/\(id)", json: base).rev)
        for body in [a, b] {
            let digest = RevID.compute(
                parent: RevID(baseRev), deleted: false, canonicalBody: RevisionBody.digestBody(body.objectValue!)).digest
            var doc = body.objectValue!
            doc["_id"] = .string(id)
            doc["_rev"] = .string("2-\(digest)")
            doc["_revisions"] = ["start": 2, "ids": [.string(digest), .string(String(baseRev.split(separator: "-")[1]))]]
            let response = try await node.request("POST", "/db/_bulk_docs", json: ["new_edits": false, "docs": [.object(doc)]])
            #expect(response.status == 201, "\(response)")
        }
    }

    @Test func listsConflictsAndResolvesByHandWithAChosenPolicy() async throws {
        try await withNode(conflicts: ConflictPolicy.none) { node in
            try await Self.makeConflict(node, base: ["name": "a", "n": 1], a: ["name": "b", "n": 1], b: ["name": "a", "n": 2])
            let listing = try await node.request("GET", "/db/_conflicts", admin: true).json
            #expect(listing["total_rows"] == 1)
            #expect(listing["rows"]?[0]?["id"] == "doc")
            #expect(listing["rows"]?[0]?["conflicts"]?.arrayValue?.count == 1)
            #expect(listing["policies"]?["default"] == "none")
            // Public port: forbidden.
            #expect(try await node.request("GET", "/db/_conflicts").status == 403)
            // Policy none keeps it; an explicit merge resolves it.
            #expect(try await node.request("POST", "/db/doc/_resolve", admin: true).json["outcome"] == "kept")
            let resolved = try await node.request("POST", "/db/doc/_resolve", json: ["policy": "merge"], admin: true)
            #expect(resolved.status == 200, "\(resolved)")
            #expect(resolved.json["outcome"] == "resolved")
            #expect(resolved.json["revs"]?.arrayValue?.count == 2)
            let doc = try await node.request("GET", "/db/doc?conflicts=true").json
            #expect(doc["name"] == "b" && doc["n"] == 2 && doc["_conflicts"] == nil)
            #expect(doc["_rev"] == resolved.json["rev"])
            #expect(try await node.request("GET", "/db/_conflicts", admin: true).json["total_rows"] == 0)
            #expect(try await node.request("GET", "/db/_all_docs?only_conflicts=true").json["rows"]?.arrayValue?.isEmpty == true)
            // Nothing left to do; bad input is a 400; unknown documents a 404.
            #expect(try await node.request("POST", "/db/doc/_resolve", admin: true).json["outcome"] == "no_conflict")
            #expect(try await node.request("POST", "/db/doc/_resolve", json: ["policy": "newest"], admin: true).status == 400)
            #expect(try await node.request("POST", "/db/nope/_resolve", admin: true).status == 404)
        }
    }

    @Test func defaultWinnerPolicyResolvesNewEditsFalseConflictsByItself() async throws {
        try await withNode { node in
            try await Self.makeConflict(node, base: ["v": 0], a: ["v": 1], b: ["v": 2])
            #expect(try await eventually { try await node.request("GET", "/db/doc?conflicts=true").json["_conflicts"] == nil })
            let listing = try await node.request("GET", "/db/_conflicts", admin: true).json
            #expect(listing["resolver"]?["resolved"] == 1)
        }
    }

    @Test func jsPolicyRunsTheConfiguredFunction() async throws {
        let node = try await TestNode.start { configuration in
            configuration.databases[0].conflicts = ConflictPolicies(default: .winner, byType: ["counter": .js])
            configuration.databases[0].conflictResolver = """
                function(conflicts, base) {
                  var total = base.count;
                  for (var i = 0; i < conflicts.length; i++) { total += conflicts[i].count - base.count; }
                  return {type: "counter", count: total};
                }
                """
        }
        do {
            try await Self.makeConflict(
                node, base: ["type": "counter", "count": 10], a: ["type": "counter", "count": 13], b: ["type": "counter", "count": 15])
            #expect(try await eventually { try await node.request("GET", "/db/doc").json["count"] == 18 })
            #expect(try await node.request("GET", "/db/doc?conflicts=true").json["_conflicts"] == nil)
        } catch {
            await node.stop()
            throw error
        }
        await node.stop()
    }
}
