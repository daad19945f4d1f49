import DocumentModel
import Foundation
import Testing
import TestSupport

/// A revision is offered to a node about once (docs/architecture.md §10.10, "Offers as
/// knowledge"): in a triangle where A writes, B and C each get A's documents from A, and
/// the side link B–C carries (almost) no offers of them, because each tells the other
/// which of A's changes it holds (`shoal/covered`). Nothing is lost for it: a document
/// B holds and C does not (C never linked to A) is still offered.
@Suite struct OfferOnceMeshTests {
    static func start(peers: [String] = []) async throws -> TestNode {
        try await TestNode.start { configuration in
            configuration.heartbeat = .milliseconds(500)
            configuration.peers = peers
        }
    }

    static func url(_ node: TestNode) -> String { "ws://127.0.0.1:\(node.ports.publicPort)/db" }

    /// The link of `node` with `peer` as `_peers` lists it.
    static func link(_ node: TestNode, to peer: TestNode) async throws -> JSON? {
        let links = try await node.request("GET", "/db/_peers", admin: true).json["peers"]?.arrayValue ?? []
        return links.first { $0["node_id"]?.stringValue == peer.node.nodeID }
    }

    static func documentCount(_ node: TestNode) async throws -> Int64 {
        try await node.request("GET", "/db/", admin: true).json["doc_count"]?.intValue ?? -1
    }

    static func write(_ node: TestNode, prefix: String, count: Int, batches: Int) async throws {
        for batch in 0..<batches {
            let docs = (0..<count).map { index -> JSON in
                ["_id": .string("\(prefix)-\(batch)-\(index)"), "batch": .int(Int64(batch)), "filler": .string(String(repeating: "x", count: 200))]
            }
            let response = try await node.request("POST", "/db/_bulk_docs", json: ["docs": .array(docs)], admin: true)
            #expect(response.status == 201)
        }
    }

    /// The side link's counters (B's and C's ends), and A's link to B.
    static func sideCounts(_ a: TestNode, _ b: TestNode, _ c: TestNode) async throws -> (sideB: JSON, sideC: JSON, fromA: JSON) {
        (try #require(try await Self.link(b, to: c)?["revisions"]), try #require(try await Self.link(c, to: b)?["revisions"]),
         try #require(try await Self.link(a, to: b)?["revisions"]))
    }

    static func count(_ json: JSON, _ key: String) -> Int64 { json[key]?.intValue ?? 0 }

    @Test func aSideLinkThatStartsAfterBothGotEverythingOffersNothing() async throws {
        let a = try await Self.start()
        let b = try await Self.start(peers: [Self.url(a)])
        let c = try await Self.start(peers: [Self.url(a)])
        let nodes = [a, b, c]
        defer { Task { for node in nodes { await node.stop() } } }
        let total: Int64 = 600
        try await Self.write(a, prefix: "a", count: 100, batches: 6)
        let arrived = try await eventually(timeout: .seconds(120)) {
            let counts = try await [Self.documentCount(b), Self.documentCount(c)]
            return counts == [total, total]
        }
        #expect(arrived, "B and C did not get A's documents")

        // Now B and C meet: each tells the other it holds all of A's changes.
        await b.node.meshes["db"]?.addStaticPeer(Self.url(c))
        let linked = try await eventually(timeout: .seconds(60)) {
            let ends = try await [Self.link(b, to: c), Self.link(c, to: b)]
            return ends.allSatisfy { $0?["in_step"] == true }
        }
        #expect(linked, "the side link did not come up in step")
        let (sideB, sideC, _) = try await Self.sideCounts(a, b, c)
        #expect(Self.count(sideB, "offered") + Self.count(sideC, "offered") == 0, "B \(sideB), C \(sideC)")
        #expect(Self.count(sideB, "not_offered") + Self.count(sideC, "not_offered") >= total, "B \(sideB), C \(sideC)")
    }

    @Test func theSideLinkOfATriangleCarriesNoOffersOfWhatBothGotFromTheThird() async throws {
        let a = try await Self.start()
        let b = try await Self.start(peers: [Self.url(a)])
        let c = try await Self.start(peers: [Self.url(a), Self.url(b)])
        let nodes = [a, b, c]
        defer { Task { for node in nodes { await node.stop() } } }
        let linked = try await eventually(timeout: .seconds(60)) {
            for (node, peer) in [(a, b), (a, c), (b, c), (b, a), (c, a), (c, b)] {
                guard try await Self.link(node, to: peer)?["state"]?.stringValue.map({ $0 == "running" || $0 == "idle" || $0 == "connected" }) == true
                else { return false }
            }
            return true
        }
        #expect(linked, "the triangle did not link")

        let (perBatch, batches) = (50, 20)
        try await Self.write(a, prefix: "a", count: perBatch, batches: batches)
        let total = Int64(perBatch * batches)
        let arrived = try await eventually(timeout: .seconds(120)) {
            let counts = try await [Self.documentCount(b), Self.documentCount(c)]
            return counts == [total, total]
        }
        #expect(arrived, "B and C did not get A's documents")
        // Let any late offer go out before counting.
        try await Task.sleep(for: .seconds(1))

        let (sideB, sideC, fromA) = try await Self.sideCounts(a, b, c)
        let sideOffers = Self.count(sideB, "offered") + Self.count(sideC, "offered")
        let notOffered = Self.count(sideB, "not_offered") + Self.count(sideC, "not_offered")
        #expect(Self.count(fromA, "offered") >= total, "A offered B its documents: \(fromA)")
        // Without knowledge, B and C offer each other about every document they got from
        // A (echo suppression drops the second offer only when the first came in time).
        // Here it is 0 when the machine is not loaded; a page that waited out the peer's
        // reports (the whole test suite beside it) offers what it holds, so the bound is loose.
        #expect(sideOffers * 4 <= total, "the side link offered \(sideOffers) of \(total) documents: B \(sideB), C \(sideC)")
        #expect(notOffered * 2 >= total, "too little was left out: B \(sideB), C \(sideC)")
    }

    @Test func whatThePeerNeverGotIsStillOffered() async throws {
        // B links to A and gets A's documents; C links only to B: B must forward them all.
        let a = try await Self.start()
        let b = try await Self.start(peers: [Self.url(a)])
        let c = try await Self.start(peers: [Self.url(b)])
        let nodes = [a, b, c]
        defer { Task { for node in nodes { await node.stop() } } }
        try await Self.write(a, prefix: "chain", count: 40, batches: 5)
        let arrived = try await eventually(timeout: .seconds(120)) { try await Self.documentCount(c) == 200 }
        let count = try await Self.documentCount(c)
        #expect(arrived, "C did not get A's documents through B (it has \(count))")
    }
}
