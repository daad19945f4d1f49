import DocumentModel
import Foundation
import Testing
import TestSupport

/// A one-shot replication whose connection the peer closes *cleanly* before the
/// work is done (close code 1001: the peer's heartbeat timed out a loaded client, or
/// the peer is shutting down) is not finished: it connects again and completes. It
/// never ends `stopped` with documents missing.
///
/// The relay lets the server's bytes through but, after the first few kilobytes of
/// the first connection, drops the client's: the server hears no answer to its pings
/// and closes with 1001, which reaches the client as a clean close.
@Suite struct CutShortTests {
    static let documents = 300

    /// A server that pings every 0.5 s and closes a client that does not answer.
    static func server() async throws -> TestNode {
        try await TestNode.start { $0.heartbeat = .milliseconds(500) }
    }

    static func fill(_ node: TestNode) async throws {
        let docs: [JSON] = (0..<documents).map { ["_id": .string("d\($0)"), "pad": .string(String(repeating: "x", count: 200))] }
        let response = try await node.request("POST", "/db/_bulk_docs", json: ["docs": .array(docs)], admin: true)
        #expect(response.status == 201, "\(response)")
    }

    static func count(_ node: TestNode) async throws -> Int {
        try await node.request("GET", "/db/_all_docs", admin: true).json["total_rows"]?.intValue.map(Int.init) ?? -1
    }

    /// Pull: the client checked a batch and asked for it, the answer never reached the
    /// server. Push: the server asked for revisions it never got.
    @Test(arguments: [("pull", 2_000), ("push", 1_000)])
    func aReplicationCutShortConnectsAgainAndCompletes(direction: String, mutedAfter: Int) async throws {
        let server = try await Self.server()
        let client = try await TestNode.start()
        defer { Task { for node in [server, client] { await node.stop() } } }
        let (source, target) = direction == "pull" ? (server, client) : (client, server)
        try await Self.fill(source)
        let relay = try TCPRelay(target: server.ports.publicPort) { $0 == 1 ? mutedAfter : nil }
        defer { relay.close() }
        try await client.replicate(direction, [
            "remote": .string("ws://127.0.0.1:\(relay.port)/db"), "direction": .string(direction), "batch_size": 50,
        ])
        let status = try await client.waitForReplication(direction, timeout: .seconds(60))
        #expect(status["status"] == "stopped", "\(status)")
        #expect(try await Self.count(target) == Self.documents, "\(status)")
        // Revisions the cut connection never answered were sent again, not refused.
        #expect(status["docs_failed_push"] == 0 && status["docs_failed_pull"] == 0, "\(status)")
        #expect(relay.connectionCount >= 2, "the first connection was not cut: the test proves nothing")
    }
}
