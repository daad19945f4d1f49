import DocumentModel
import Foundation
import Testing
import TestSupport

/// `GET /_active_tasks` lists the node's running replications as CouchDB does; a
/// finished one-shot replication is no longer active.
@Suite struct ActiveTasksTests {
    @Test func runningReplicationsAreListedFinishedOnesAreNot() async throws {
        try await withNodes(2) { nodes in
            let (a, b) = (nodes[0], nodes[1])
            #expect(try await b.request("GET", "/_active_tasks", admin: true).json == [])
            _ = try await a.put("one", ["n": 1])
            try await b.replicate("live", ["remote": .string(a.syncURL), "direction": "pull", "continuous": true])
            try await b.replicate("once", ["remote": .string(a.syncURL), "direction": "push"])
            #expect(try await eventually { try await b.request("GET", "/db/one").status == 200 })
            #expect(try await eventually { try await b.replicationStatus("once")["status"] == "stopped" })

            let tasks = try await b.request("GET", "/_active_tasks", admin: true)
            #expect(tasks.status == 200)
            let list = try #require(tasks.json.arrayValue)
            #expect(list.count == 1, "only the continuous replication is active: \(tasks.json)")
            let task = try #require(list.first)
            #expect(task["type"] == "replication")
            #expect(task["replication_id"] == "live" && task["doc_id"] == "live")
            #expect(task["database"] == "db")
            #expect(task["source"]?.stringValue?.hasPrefix(a.syncURL) == true, "a pull's source is the remote")
            #expect(task["target"] == "db")
            #expect(task["continuous"] == true)
            #expect(task["docs_written"] == 1 && task["docs_read"] == 1 && task["doc_write_failures"] == 0)
            // Tools compute `started_on * 1000` (Fauxton, couchdb-style dashboards).
            let started = try #require(task["started_on"]?.intValue)
            let updated = try #require(task["updated_on"]?.intValue)
            #expect(started > 1_700_000_000 && started <= updated)
            #expect(try await b.replicationStatus("live")["started_on"]?.intValue == started)

            try await b.request("GET", "/_active_tasks", admin: false).expectStatus(403)
            try await b.request("DELETE", "/_active_tasks", admin: true).expectStatus(405)
            try await b.request("PUT", "/db/_replicationStatus/live?action=stop", admin: true).expectStatus(200)
            #expect(try await b.request("GET", "/_active_tasks", admin: true).json == [])
        }
    }
}
