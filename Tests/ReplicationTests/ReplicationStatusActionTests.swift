import DocumentModel
import Foundation
import Testing
import TestSupport

/// `PUT /{db}/_replicationStatus/{id}?action=stop|start` (Sync Gateway's): a stopped
/// replication stays listed as `stopped` and carries nothing; started again, it resumes
/// from its checkpoint. The admin UI's Stop and Start buttons call it.
@Suite struct ReplicationStatusActionTests {
    @Test func aReplicationStopsAndStartsAgain() async throws {
        try await withNodes(2) { nodes in
            let (a, b) = (nodes[0], nodes[1])
            try await b.replicate("pull", ["remote": .string(a.syncURL), "direction": "pull", "continuous": true])
            _ = try await a.put("one", ["n": 1])
            #expect(try await eventually { try await b.request("GET", "/db/one").status == 200 })

            let stopped = try await b.request("PUT", "/db/_replicationStatus/pull?action=stop", admin: true)
            #expect(stopped.status == 200 && stopped.json["status"] == "stopped", "\(stopped)")
            _ = try await a.put("two", ["n": 2])
            try await Task.sleep(for: .milliseconds(500))
            try await b.request("GET", "/db/two").expectStatus(404)
            #expect(try await b.replicationStatus("pull")["status"] == "stopped")

            try await b.request("PUT", "/db/_replicationStatus/pull?action=start", admin: true).expectStatus(200)
            #expect(try await eventually { try await b.request("GET", "/db/two").status == 200 })
            #expect(try await b.replicationStatus("pull")["docs_pulled"] == 1)

            try await b.request("PUT", "/db/_replicationStatus/pull?action=sideways", admin: true).expectStatus(400)
            try await b.request("PUT", "/db/_replicationStatus/none?action=stop", admin: true).expectStatus(404)
            try await b.request("PUT", "/db/_replicationStatus/pull?action=stop", admin: false).expectStatus(403)
        }
    }
}
