import DocumentModel
import Foundation
import Testing
import TestSupport

/// The resync a deploy starts (`PUT /{db}/_config/sync`) is followed live: `GET
/// /{db}/_resync` (Sync Gateway's shape plus `docs_total`) and the admin UI's event
/// stream (`resync` events, and `resync` in each database's status) show it running
/// with its counts, then completed with the right ones.
@Suite struct ResyncProgressTests {
    static let documents = 2000

    /// Routes every document; the new one routes only `team` documents and spends a
    /// couple of milliseconds on each, so the resync runs long enough to be watched.
    static let before = "function(doc) { channel(doc.team ? 'team' : 'others'); }"
    static let after = """
        function(doc) {
          var until = Date.now() + 2;
          while (Date.now() < until) {}
          if (doc.team) channel('team');
        }
        """

    /// Reads `/_admin/events` until the resync `run` is reported completed; returns every
    /// resync state seen for `db` (from `resync` and `status` events), in order.
    static func followResync(port: Int, run: Int) throws -> [JSON] {
        let socket = try RawSocket(port: port, timeout: 60)
        try socket.write(Array("GET /_admin/events?interval=1000 HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        _ = try socket.readHead()
        var buffer = ""
        var seen: [JSON] = []
        while true {
            guard let chunk = try socket.readChunk() else { return seen }
            buffer += String(decoding: chunk, as: UTF8.self)
            while let end = buffer.range(of: "\n\n") {
                let lines = buffer[..<end.lowerBound].split(separator: "\n")
                buffer.removeSubrange(..<end.upperBound)
                let name = lines.first { $0.hasPrefix("event: ") }?.dropFirst(7)
                let data = lines.filter { $0.hasPrefix("data: ") }.map { $0.dropFirst(6) }.joined(separator: "\n")
                var state: JSON?
                if name == "resync" {
                    state = try JSON.parse(data)["db"]
                } else if name == "status" {
                    state = try JSON.parse(data)["databases"]?.arrayValue?.first { $0["name"] == "db" }?["resync"]
                }
                guard let state, state["run"]?.intValue == Int64(run) else { continue }
                seen.append(state)
                if state["status"] == "completed" || state["status"] == "error" { return seen }
            }
        }
    }

    @Test func aDeploysResyncIsVisibleWhileItRunsAndCompletesWithTheRightCounts() async throws {
        let node = try await TestNode.start { configuration in
            configuration.databases[0].sync = Self.before
        }
        defer { Task { await node.stop() } }
        for start in stride(from: 0, to: Self.documents, by: 500) {
            let docs: [JSON] = (start..<start + 500).map { index in
                ["_id": .string("doc-\(index)"), "team": .bool(index % 2 == 0)]
            }
            try await node.request("POST", "/db/_bulk_docs", json: ["docs": .array(docs)], admin: true).expectStatus(201)
        }
        let initial = try await node.request("GET", "/db/_resync", admin: true).json
        let run = Int(initial["run"]?.intValue ?? 0) + 1

        let port = node.ports.adminPort
        let events = Task { try await offThePool { try Self.followResync(port: port, run: run) } }
        try await Task.sleep(for: .milliseconds(300))
        async let deployed = node.request(
            "PUT", "/db/_config/sync", raw: Array(Self.after.utf8), headers: ["Content-Type": "application/javascript"], admin: true)
        // Sync Gateway's `GET /{db}/_resync` while it runs.
        var polled: [JSON] = []
        while polled.last?["status"] != "completed" && polled.count < 3000 {
            let status = try await node.request("GET", "/db/_resync", admin: true).json
            if status["run"]?.intValue == Int64(run) { polled.append(status) }
            try await Task.sleep(for: .milliseconds(20))
        }
        let answer = try await deployed
        #expect(answer.status == 201, "\(answer)")
        #expect(answer.json["resync"]?["processed"] == .int(Int64(Self.documents)), "\(answer)")
        #expect(answer.json["resync"]?["changed"] == .int(Int64(Self.documents / 2)), "\(answer)")

        let running = polled.filter { $0["status"] == "running" }
        #expect(running.contains(where: Self.isMidway), "\(polled.map(\.canonicalString))")
        #expect(running.allSatisfy { $0["docs_total"] == .int(Int64(Self.documents)) && $0["trigger"] == "config" })
        let processed = polled.compactMap { $0["docs_processed"]?.intValue }
        #expect(processed == processed.sorted(), "progress never goes back: \(processed)")
        let final = try #require(polled.last)
        #expect(final["status"] == "completed" && final["last_error"] == "", "\(final)")
        #expect(final["docs_processed"] == .int(Int64(Self.documents)))
        #expect(final["docs_changed"] == .int(Int64(Self.documents / 2)))
        #expect(final["docs_total"] == .int(Int64(Self.documents)))
        #expect(final["start_time"]?.stringValue != nil && final["end_time"]?.stringValue != nil)

        // The admin UI's event stream carried the same progress, pushed as it changed.
        let streamed = try await events.value
        #expect(streamed.contains { $0["status"] == "running" && Self.isMidway($0) },
                "\(streamed.map(\.canonicalString))")
        #expect(streamed.last?["status"] == "completed" && streamed.last?["docs_processed"] == .int(Int64(Self.documents)),
                "\(streamed.map(\.canonicalString))")
    }

    /// Some documents processed, not all yet.
    static func isMidway(_ status: JSON) -> Bool {
        let processed = status["docs_processed"]?.intValue ?? 0
        return processed > 0 && processed < Int64(documents)
    }

    @Test func noResyncYetReadsAsStopped() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let status = try await node.request("GET", "/db/_resync", admin: true).json
        #expect(status["status"] == "stopped" && status["docs_processed"] == 0 && status["run"] == 0, "\(status)")
        try await node.request("GET", "/db/_resync").expectStatus(403)
    }
}
