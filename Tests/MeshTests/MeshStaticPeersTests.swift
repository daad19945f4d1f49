import DocumentModel
import Foundation
import Testing
import TestSupport

/// Nodes joined by static peers: every write reaches every node (replication is
/// transitive), and the mesh status shows who dials whom.
@Suite struct MeshStaticPeersTests {
    @Test func staticPeersFormAMeshThatConverges() async throws {
        let b = try await TestNode.start()
        let c = try await TestNode.start()
        let a = try await TestNode.start { configuration in
            configuration.heartbeat = .milliseconds(500)
            configuration.peers = [
                "ws://127.0.0.1:\(b.ports.publicPort)/db", "http://127.0.0.1:\(c.ports.publicPort)/db",
            ]
        }
        defer { Task { for node in [a, b, c] { await node.stop() } } }
        for (index, node) in [a, b, c].enumerated() {
            for doc in 0..<10 {
                _ = try await node.request("PUT", "/db/n\(index)-\(doc)", json: ["from": .int(Int64(index))])
            }
        }
        // B and C only know A; their documents still reach each other through it.
        let converged = try await eventually {
            let all = try await [a, b, c].asyncMap { try await $0.request("GET", "/db/_all_docs").json["total_rows"] }
            return all.allSatisfy { $0 == 30 }
        }
        #expect(converged)

        let peersOfA = try await a.request("GET", "/db/_peers", admin: true).json
        let dialed = peersOfA["peers"]?.arrayValue ?? []
        #expect(dialed.count == 2)
        #expect(dialed.allSatisfy { $0["role"] == "dial" && $0["source"] == "static" })
        let aID = try #require(peersOfA["node_id"]?.stringValue)
        let peersOfB = try await b.request("GET", "/db/_peers", admin: true).json
        #expect(peersOfB["peers"]?[0]?["node_id"] == .string(aID))
        #expect(peersOfB["peers"]?[0]?["role"] == "accept")
        let mesh = try await a.request("GET", "/_mesh", admin: true).json
        #expect(mesh["node_id"] == .string(aID))
        #expect(mesh["meshes"]?[0]?["group"] == "db")
        try await a.request("GET", "/_mesh").expectStatus(403)
        let metrics = try await a.request("GET", "/_metrics", admin: true)
        #expect(metrics.headers["content-type"]?.hasPrefix("text/plain") == true)
        #expect(metrics.text.contains("shoal_mesh_peers_connected{db=\"db\"} 2"), "\(metrics.text)")
        #expect(metrics.text.contains("shoal_documents{db=\"db\"} 30"))
        // Replication bytes in and out are counted (30 documents came through the mesh).
        for name in ["shoal_replication_bytes_out_total", "shoal_replication_bytes_in_total"] {
            let line = metrics.text.split(separator: "\n").first { $0.hasPrefix(name + "{") }
            #expect((line?.split(separator: " ").last.flatMap { Int($0) } ?? 0) > 1000, "\(name): \(line ?? "missing")")
        }
        #expect(metrics.text.contains("shoal_conflicts_resolved_total{db=\"db\"} 0"))
        #expect(metrics.text.contains("shoal_http_requests_total{method=\"PUT\",status=\"201\"} 10"))
        // swift-prometheus's exposition: types, help, the latency histogram from swift-metrics' Timer.
        #expect(metrics.text.contains("# TYPE shoal_documents gauge"))
        #expect(metrics.text.contains("# HELP shoal_documents Live documents."))
        #expect(metrics.text.contains("shoal_http_request_duration_seconds_bucket{le=\"+Inf\"}"), "\(metrics.text)")
        // The node ID persists in the data directory.
        let stored = try String(contentsOfFile: a.directory.path + "/node-id", encoding: .utf8)
        #expect(stored.trimmingCharacters(in: .whitespacesAndNewlines) == aID)
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}

extension HTTPResult {
    func expectStatus(_ status: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(self.status == status, "\(self)", sourceLocation: sourceLocation)
    }
}
