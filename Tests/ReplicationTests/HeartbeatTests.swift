import DocumentModel
import Foundation
import Testing
import TestSupport

/// A peer that stops answering (SIGSTOP: the TCP connection stays open, nothing
/// is answered) is noticed by the WebSocket heartbeat, and the replication comes
/// back by itself when the peer does.
@Suite struct HeartbeatTests {
    @Test func frozenPeerIsDetectedAndRecovered() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-heartbeat")
        defer { directory.remove() }
        let peer = try await ShoalProcess.start(dataDirectory: directory.path)
        defer { peer.signal(SIGKILL) }
        try await withNodes(1) { nodes in
            let node = nodes[0]
            try await node.replicate("live", [
                "remote": .string("ws://127.0.0.1:\(peer.publicPort)/db"), "continuous": true, "heartbeat": 0.5,
            ])
            _ = try await node.put("before", ["x": 1])
            #expect(try await eventually { try await peer.request("GET", "/db/before").status == 200 })

            peer.signal(SIGSTOP)
            let frozenAt = ContinuousClock.now
            // Heartbeat 0.5 s: pings every 0.75 s, gone by the next unanswered ping.
            let noticed = try await eventually(timeout: .seconds(10), every: .milliseconds(100)) {
                let state = try await node.replicationStatus("live")["status"]?.stringValue
                return state == "reconnecting"
            }
            let detection = ContinuousClock.now - frozenAt
            #expect(noticed, "the frozen peer was not noticed")
            _ = try await node.put("during", ["x": 2])

            peer.signal(SIGCONT)
            #expect(try await eventually(timeout: .seconds(20)) {
                try await peer.request("GET", "/db/during").status == 200
            })
            let state = try await node.replicationStatus("live")["status"]?.stringValue
            #expect(state == "running" || state == "idle", "\(state ?? "nil")")
            print("heartbeat 0.5 s: frozen peer noticed after \(detection)")
        }
    }
}

/// The same, all in one process: a relay between two in-process nodes goes silent
/// (connections stay open, nothing is delivered, as in a partition), the heartbeat
/// notices it, and replication resumes when the relay delivers again.
@Suite struct SilentTransportTests {
    @Test func silentLinkIsNoticedWithinThreeIntervalsAndHeals() async throws {
        try await withNodes(2) { nodes in
            let (node, peer) = (nodes[0], nodes[1])
            let relay = try TCPRelay(target: peer.ports.publicPort)
            defer { relay.close() }
            try await node.replicate("live", [
                "remote": .string("ws://127.0.0.1:\(relay.port)/db"), "direction": "pushAndPull",
                "continuous": true, "heartbeat": 0.5,
            ])
            _ = try await node.put("before", ["x": 1])
            #expect(try await eventually { try await peer.request("GET", "/db/before").status == 200 })

            relay.isSilent = true
            let silentAt = ContinuousClock.now
            let noticed = try await eventually(timeout: .seconds(10), every: .milliseconds(50)) {
                try await node.replicationStatus("live")["status"] == "reconnecting"
            }
            let detection = ContinuousClock.now - silentAt
            #expect(noticed, "the silent link was not noticed")
            // Three intervals of 0.5 s, plus scheduling slack on a loaded machine (the
            // full suite runs beside other builds on two cores): far less than the
            // 10 s a link without heartbeats would take to be given up.
            #expect(detection < .seconds(5), "noticed after \(detection)")
            _ = try await node.put("during", ["x": 2])
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await peer.request("GET", "/db/during").status == 404)

            relay.isSilent = false
            #expect(try await eventually(timeout: .seconds(20)) { try await peer.request("GET", "/db/during").status == 200 })
            print("heartbeat 0.5 s: silent link noticed after \(detection)")
        }
    }
}
