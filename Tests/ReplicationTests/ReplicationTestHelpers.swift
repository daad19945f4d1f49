import DocumentModel
import Foundation
import Testing
import TestSupport

/// Nodes of one test, stopped at the end.
func withNodes(
    _ count: Int, persistent: Bool = false, conflicts: ConflictPolicy? = nil, _ body: ([TestNode]) async throws -> Void
) async throws {
    var nodes: [TestNode] = []
    for _ in 0..<count { nodes.append(try await TestNode.start(persistent: persistent, conflicts: conflicts)) }
    do {
        try await body(nodes)
    } catch {
        for node in nodes { await node.stop() }
        throw error
    }
    for node in nodes { await node.stop() }
}

extension TestNode {
    /// `ws://127.0.0.1:<public port>/db/_blipsync`
    var syncURL: String { "ws://127.0.0.1:\(ports.publicPort)/db" }

    func put(_ id: String, _ body: [String: JSON]) async throws -> String {
        let response = try await request("PUT", "/db/\(id)", json: .object(body))
        #expect(response.status == 201, "\(response)")
        return response.json["rev"]?.stringValue ?? ""
    }

    /// Starts replication `id` on this node's admin API.
    func replicate(_ id: String, _ definition: JSON) async throws {
        let response = try await request("PUT", "/db/_replication/\(id)", json: definition, admin: true)
        #expect(response.status == 201, "\(response)")
    }

    func replicationStatus(_ id: String) async throws -> JSON {
        try await request("GET", "/db/_replicationStatus/\(id)", admin: true).json
    }

    /// Waits for a one-shot replication to stop; returns its final status.
    func waitForReplication(_ id: String, timeout: Duration = .seconds(30)) async throws -> JSON {
        var status: JSON = .null
        _ = try await eventually(timeout: timeout) {
            status = try await replicationStatus(id)
            return status["status"] == "stopped" || status["status"] == "error"
        }
        return status
    }

    /// Every document with all its leaf revisions: a comparable picture of the database.
    func snapshot() async throws -> [String: [String]] {
        let all = try await request("GET", "/db/_changes?style=all_docs").json
        var result: [String: [String]] = [:]
        for entry in all["results"]?.arrayValue ?? [] {
            guard let id = entry["id"]?.stringValue else { continue }
            result[id] = (entry["changes"]?.arrayValue ?? []).compactMap { $0["rev"]?.stringValue }.sorted()
        }
        return result
    }
}
