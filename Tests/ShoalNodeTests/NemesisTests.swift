import DocumentModel
import Foundation
import Testing
import TestSupport

@testable import ShoalNode

/// The nemesis inside a node (`/_nemesis`): off unless the config enables it, admin-only;
/// a partition cuts and refuses the links with the chosen peer on whichever side asked,
/// and heals when lifted, by request or by its own deadline; a full disk answers 507 and
/// says it is injected; a clock offset moves the hybrid logical clock; every fault shows
/// in `_mesh` and the metrics.
@Suite struct NemesisTests {
    static func enabled(_ configuration: inout NodeConfiguration) {
        configuration.nemesis = NemesisSettings(enabled: true, maxDuration: .seconds(120))
        configuration.heartbeat = .milliseconds(500)
    }

    static func count(_ node: TestNode) async throws -> Int64? {
        try await node.request("GET", "/db/_all_docs").json["total_rows"]?.intValue
    }

    @Test func offByDefaultAndAdminOnly() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let status = try await node.request("GET", "/_nemesis", admin: true)
        status.expectStatus(200)
        #expect(status.json["enabled"] == false)
        let refused = try await node.request("POST", "/_nemesis", json: ["fault": "stall", "duration": 5], admin: true)
        refused.expectStatus(403)
        #expect(refused.json["reason"]?.stringValue?.contains("\"enabled\": true") == true)
        try await node.request("GET", "/_nemesis").expectStatus(403)
        #expect(try await node.request("GET", "/_mesh", admin: true).json["nemesis"]?["enabled"] == false)

        let on = try await TestNode.start(configure: Self.enabled)
        defer { Task { await on.stop() } }
        try await on.request("POST", "/_nemesis", json: ["fault": "stall", "duration": 5]).expectStatus(403)
        let bad = try await on.request("POST", "/_nemesis", json: ["fault": "stall", "duration": 500], admin: true)
        bad.expectStatus(400)
        #expect(bad.json["reason"]?.stringValue?.contains("max_duration") == true)
        try await on.request("POST", "/_nemesis", raw: Array("{nope".utf8), headers: ["Content-Type": "application/json"], admin: true)
            .expectStatus(400)
        try await on.request("DELETE", "/_nemesis/99", admin: true).expectStatus(404)
    }

    @Test func aPartitionCutsTheLinkOnEitherSideAndHealsWhenLifted() async throws {
        let b = try await TestNode.start(configure: Self.enabled)
        let a = try await TestNode.start { configuration in
            Self.enabled(&configuration)
            configuration.peers = ["ws://127.0.0.1:\(b.ports.publicPort)/db"]
        }
        defer { Task { for node in [a, b] { await node.stop() } } }
        _ = try await a.request("PUT", "/db/first", json: ["n": 1])
        #expect(try await eventually { try await Self.count(b) == 1 })
        let aID = a.node.nodeID
        let bID = b.node.nodeID

        // The acceptor partitions the dialer: the link closes, redials are refused.
        let cut = try await b.request(
            "POST", "/_nemesis", json: ["fault": "partition", "peers": [.string(aID)], "duration": 100], admin: true)
        cut.expectStatus(201)
        let id = try #require(cut.json["id"]?.intValue)
        #expect(try await eventually { try await b.request("GET", "/db/_peers", admin: true).json["peers"]?.arrayValue?.isEmpty == true })
        _ = try await a.request("PUT", "/db/during", json: ["n": 2])
        try await Task.sleep(for: .seconds(1))
        #expect(try await Self.count(b) == 1, "a write crossed the partition")
        let mesh = try await b.request("GET", "/_mesh", admin: true).json
        #expect(mesh["nemesis"]?["faults"]?[0]?["fault"] == "partition")
        let metrics = try await b.request("GET", "/_metrics", admin: true).text
        #expect(metrics.contains("shoal_nemesis_faults_total{kind=\"partition\"} 1"), "\(metrics)")
        #expect(metrics.contains("shoal_nemesis_faults_active{kind=\"partition\"} 1"))
        try await b.request("DELETE", "/_nemesis/\(id)", admin: true).expectStatus(200)
        #expect(try await eventually { try await Self.count(b) == 2 })
        let lifted = try await b.request("GET", "/_nemesis", admin: true).json
        #expect(lifted["faults"]?.arrayValue?.isEmpty == true)
        #expect(lifted["lifted"]?[0]?["how"] == "request")

        // The dialer partitions the acceptor, for 2 s: it lifts itself.
        try await a.request(
            "POST", "/_nemesis", json: ["fault": "partition", "peers": [.string(bID)], "duration": 2], admin: true
        ).expectStatus(201)
        // The link closes and the redials are refused by the dialer itself.
        #expect(try await eventually {
            try await a.request("GET", "/db/_peers", admin: true).json["peers"]?[0]?["last_error"]?.stringValue?.contains("nemesis") == true
        })
        _ = try await b.request("PUT", "/db/after", json: ["n": 3])
        #expect(try await eventually(timeout: .seconds(60)) { try await Self.count(a) == 3 })
        let history = try await a.request("GET", "/_nemesis", admin: true).json
        #expect(history["faults"]?.arrayValue?.isEmpty == true)
        #expect(history["lifted"]?[0]?["how"] == "deadline")
    }

    @Test func aFullDiskAnswers507AndSaysItIsInjected() async throws {
        let node = try await TestNode.start(configure: Self.enabled)
        defer { Task { await node.stop() } }
        _ = try await node.request("PUT", "/db/kept", json: ["n": 1])
        let fault = try await node.request("POST", "/_nemesis", json: ["fault": "disk_full", "duration": 60], admin: true)
        fault.expectStatus(201)
        let refused = try await node.request("PUT", "/db/new", json: ["n": 2])
        refused.expectStatus(507)
        #expect(refused.json["reason"]?.stringValue?.contains("injected by the nemesis") == true)
        try await node.request("GET", "/db/kept").expectStatus(200)
        try await node.request("POST", "/_nemesis", json: ["fault": "disk_full", "databases": ["nope"], "duration": 5], admin: true)
            .expectStatus(404)
        let lifted = try await node.request("DELETE", "/_nemesis", admin: true)
        #expect(lifted.json["lifted"] == 1)
        try await node.request("PUT", "/db/new", json: ["n": 2]).expectStatus(201)
    }

    /// Revisions a peer offered while this node's disk was full arrive once it is not:
    /// a store failure (507) is not a refused revision, so no checkpoint passes it.
    @Test func revisionsRefusedByAFullDiskArriveOnceItIsNot() async throws {
        let b = try await TestNode.start(configure: Self.enabled)
        let a = try await TestNode.start { configuration in
            Self.enabled(&configuration)
            configuration.peers = ["ws://127.0.0.1:\(b.ports.publicPort)/db"]
        }
        defer { Task { for node in [a, b] { await node.stop() } } }
        _ = try await a.request("PUT", "/db/first", json: ["n": 1])
        _ = try await b.request("PUT", "/db/second", json: ["n": 2])
        #expect(try await eventually {
            let counts = (try await Self.count(a), try await Self.count(b))
            return counts == (2, 2)
        })
        // B's disk is full: what A pushes, and what B pulls, fails to store there.
        try await b.request("POST", "/_nemesis", json: ["fault": "disk_full", "duration": 60], admin: true).expectStatus(201)
        for doc in 0..<20 { _ = try await a.request("PUT", "/db/during-\(doc)", json: ["n": .int(Int64(doc))]) }
        #expect(try await eventually {
            try await a.request("GET", "/db/_peers", admin: true).json["peers"]?[0]?["last_error"]?.stringValue?.contains("store") == true
        })
        #expect(try await Self.count(b) == 2)
        try await b.request("DELETE", "/_nemesis", admin: true).expectStatus(200)
        #expect(try await eventually(timeout: .seconds(60)) { try await Self.count(b) == 22 })
    }

    @Test func aClockOffsetMovesTheHybridClock() async throws {
        let node = try await TestNode.start(configure: Self.enabled)
        defer { Task { await node.stop() } }
        let store = try #require(node.node.database(named: "db"))
        try await node.request("POST", "/_nemesis", json: ["fault": "clock", "offset_ms": 7_200_000, "duration": 60], admin: true)
            .expectStatus(201)
        _ = try await node.request("PUT", "/db/ahead", json: ["n": 1])
        let wall = UInt64(Date().timeIntervalSince1970 * 1e9)
        // Two hours ahead (within a minute: the write took some time).
        #expect(store.versionClockTime > wall + 7_140 * 1_000_000_000)
        try await node.request("DELETE", "/_nemesis", admin: true).expectStatus(200)
    }
}
