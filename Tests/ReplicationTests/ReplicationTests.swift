import DocumentModel
import Foundation
import Testing
import TestSupport

/// Two and three real nodes on loopback replicating over BLIP/WebSocket.
@Suite struct ReplicationTests {
    @Test func oneShotPullAndPush() async throws {
        try await withNodes(2) { nodes in
            let (a, b) = (nodes[0], nodes[1])
            for index in 0..<50 { _ = try await a.put("a\(index)", ["n": .int(Int64(index))]) }
            for index in 0..<30 { _ = try await b.put("b\(index)", ["n": .int(Int64(index))]) }
            try await b.replicate("pull", ["remote": .string(a.syncURL), "direction": "pull"])
            let pulled = try await b.waitForReplication("pull")
            #expect(pulled["status"] == "stopped", "\(pulled)")
            #expect(pulled["docs_pulled"] == 50)
            #expect(try await b.request("GET", "/db/a7").json["n"] == 7)

            try await b.replicate("push", ["remote": .string(a.syncURL), "direction": "push"])
            let pushed = try await b.waitForReplication("push")
            #expect(pushed["status"] == "stopped", "\(pushed)")
            #expect(pushed["docs_pushed"] == 30)
            let (sa, sb) = (try await a.snapshot(), try await b.snapshot())
            #expect(sa == sb)
        }
    }

    @Test func continuousBothWaysWithDeletesAndConflicts() async throws {
        // Policy none: both branches must stay on both nodes.
        try await withNodes(2, conflicts: ConflictPolicy.none) { nodes in
            let (a, b) = (nodes[0], nodes[1])
            let base = try await a.put("shared", ["v": 0])
            try await b.replicate("sync", ["remote": .string(a.syncURL), "direction": "pushAndPull", "continuous": true])
            #expect(try await eventually { try await b.request("GET", "/db/shared").status == 200 })
            // Later writes on each side reach the other.
            _ = try await a.put("fromA", ["x": 1])
            _ = try await b.put("fromB", ["x": 2])
            #expect(try await eventually {
                let (sa, sb) = (try await a.snapshot(), try await b.snapshot())
                return sa == sb && sa.count == 3
            })
            // Caught up both ways: the continuous replication is idle.
            #expect(try await eventually { try await b.replicationStatus("sync")["status"] == "idle" })
            // A deletion replicates.
            let rev = try #require(try await a.request("GET", "/db/fromA").json["_rev"]?.stringValue)
            _ = try await a.request("DELETE", "/db/fromA?rev=\(rev)")
            #expect(try await eventually { try await b.request("GET", "/db/fromA").status == 404 })
            // Concurrent edits of the same document: both branches end on both nodes, same winner.
            // Stop syncing, edit on both sides, sync again.
            try await b.request("DELETE", "/db/_replication/sync", admin: true).expectStatus(200)
            _ = try await a.put("shared", ["_rev": .string(base), "v": "edited on a"])
            _ = try await b.put("shared", ["_rev": .string(base), "v": "edited on b"])
            try await b.replicate("sync2", ["remote": .string(a.syncURL), "direction": "pushAndPull", "continuous": true])
            #expect(try await eventually {
                let (sa, sb) = (try await a.snapshot(), try await b.snapshot())
                return sa["shared"]?.count == 2 && sa == sb
            })
            let winnerA = try await a.request("GET", "/db/shared?conflicts=true").json
            let winnerB = try await b.request("GET", "/db/shared?conflicts=true").json
            #expect(winnerA == winnerB)
            #expect(winnerA["_conflicts"]?.arrayValue?.count == 1)
        }
    }

    @Test func attachmentsLargerThanFramesAndWindow() async throws {
        try await withNodes(2) { nodes in
            let (a, b) = (nodes[0], nodes[1])
            let big = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
            let small = Array("tiny".utf8)
            let rev = try #require(try await a.request("PUT", "/db/doc/big.bin", raw: big, headers: ["Content-Type": "application/octet-stream"]).json["rev"]?.stringValue)
            _ = try await a.request("PUT", "/db/doc/small.txt?rev=\(rev)", raw: small, headers: ["Content-Type": "text/plain"])
            try await b.replicate("pull", ["remote": .string(a.syncURL), "direction": "pull"])
            let status = try await b.waitForReplication("pull")
            #expect(status["status"] == "stopped" && status["docs_pulled"] == 1, "\(status)")
            #expect(try await b.request("GET", "/db/doc/big.bin").body == big)
            #expect(try await b.request("GET", "/db/doc/small.txt").text == "tiny")
            let (docA, docB) = (try await a.request("GET", "/db/doc").json, try await b.request("GET", "/db/doc").json)
            #expect(docA == docB)
        }
    }

    @Test func restartResumesFromTheCheckpoint() async throws {
        try await withNodes(2) { nodes in
            let (a, b) = (nodes[0], nodes[1])
            for index in 0..<40 { _ = try await a.put("d\(index)", ["n": .int(Int64(index))]) }
            try await a.replicate("push", ["remote": .string(b.syncURL), "direction": "push"])
            #expect(try await a.waitForReplication("push")["docs_pushed"] == 40)
            for index in 40..<45 { _ = try await a.put("d\(index)", ["n": .int(Int64(index))]) }
            // The same replication again: only the 5 new revisions are sent.
            try await a.replicate("push", ["remote": .string(b.syncURL), "direction": "push"])
            let second = try await a.waitForReplication("push")
            #expect(second["docs_pushed"] == 5, "\(second)")
            #expect(second["docs_checked_push"] == 5, "\(second)")
            let (sa, sb) = (try await a.snapshot(), try await b.snapshot())
            #expect(sa == sb)
        }
    }

    @Test func threeNodesInAChainConverge() async throws {
        try await withNodes(3) { nodes in
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            try await b.replicate("ab", ["remote": .string(a.syncURL), "continuous": true])
            try await b.replicate("bc", ["remote": .string(c.syncURL), "continuous": true])
            for index in 0..<20 {
                _ = try await a.put("a\(index)", ["n": .int(Int64(index))])
                _ = try await c.put("c\(index)", ["n": .int(Int64(index))])
            }
            #expect(try await eventually {
                let (sa, sb, sc) = (try await a.snapshot(), try await b.snapshot(), try await c.snapshot())
                return sa.count == 40 && sa == sb && sb == sc
            })
        }
    }

    @Test func unreachableAndMissingPeersReportErrors() async throws {
        try await withNodes(1) { nodes in
            let node = nodes[0]
            try await node.replicate("missingdb", ["remote": .string("ws://127.0.0.1:\(node.ports.publicPort)/nope")])
            let status = try await node.waitForReplication("missingdb")
            #expect(status["status"] == "error", "\(status)")
            #expect(status["error_message"]?.stringValue?.contains("404") == true, "\(status)")
            try await node.request("PUT", "/db/_replication/bad", json: ["remote": "ftp://x/db"], admin: true).expectStatus(400)
            try await node.request("PUT", "/db/_replication/bad", json: ["remote": "ws://x/db", "direction": "sideways"], admin: true).expectStatus(400)
            try await node.request("GET", "/db/_replication/", admin: false).expectStatus(403)
            try await node.request("GET", "/db/_replicationStatus/none", admin: true).expectStatus(404)
            try await node.request("GET", "/db/_blipsync").expectStatus(400)
        }
    }
}

extension HTTPResult {
    func expectStatus(_ status: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(self.status == status, "\(self)", sourceLocation: sourceLocation)
    }
}

@Suite struct StoredReplicationTests {
    @Test func replicationsCreatedThroughTheAPISurviveARestart() async throws {
        let peer = try await TestNode.start()
        let first = try await TestNode.start(persistent: true)
        let directory = first.directory
        try await first.replicate("kept", ["remote": .string(peer.syncURL), "continuous": true])
        try await first.replicate("gone", ["remote": .string(peer.syncURL), "continuous": true])
        try await first.request("DELETE", "/db/_replication/gone", admin: true).expectStatus(200)
        await first.stop(keepingData: true)
        let second = try await TestNode.start(persistent: true, directory: directory)
        let list = try await second.request("GET", "/db/_replication/", admin: true).json
        #expect(list.arrayValue?.compactMap { $0["replication_id"]?.stringValue } == ["kept"])
        _ = try await second.put("after", ["x": 1])
        #expect(try await eventually { try await peer.request("GET", "/db/after").status == 200 })
        await second.stop()
        await peer.stop()
    }
}
