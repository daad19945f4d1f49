import DocumentModel
import DocumentStore
import Foundation
import Testing
import TestSupport
@testable import Replication

/// Echo suppression: what a peer offered over a connection is not offered back to it
/// over that connection, and everything else still is.
@Suite struct PeerRevisionsTests {
    @Test func remembersTheLatestRevisionPerDocument() throws {
        let revisions = PeerRevisions()
        let (first, second) = (try #require(RevID("1-aa")), try #require(RevID("2-bb")))
        revisions.record(docID: "a", rev: first)
        #expect(revisions.has(docID: "a", rev: first))
        revisions.record(docID: "a", rev: second)
        #expect(revisions.has(docID: "a", rev: second))
        #expect(!revisions.has(docID: "a", rev: first))
        #expect(!revisions.has(docID: "b", rev: second))
        #expect(revisions.count == 1)
        // Forgotten (the peer lacks part of its vector): offered again; another revision stays.
        revisions.forget(docID: "a", rev: first)
        #expect(revisions.has(docID: "a", rev: second))
        revisions.forget(docID: "a", rev: second)
        #expect(!revisions.has(docID: "a", rev: second))
        #expect(revisions.count == 0)
    }

    /// A winner offered with its vector counts as the peer's only while the vector here is
    /// the one the peer offered: grown here (reconciled with another peer), it goes again.
    @Test func aWinnerWhoseVectorGrewHereIsOfferedAgain() throws {
        let revisions = PeerRevisions()
        let rev = try #require(RevID("1-aa"))
        revisions.record(docID: "a", rev: rev, vector: .stored("18eebf4c289d0000@vHHCGAGyCjb8F0aB1CnhAQ"))
        #expect(revisions.has(docID: "a", rev: rev, vector: .stored("18eebf4c289d0000@vHHCGAGyCjb8F0aB1CnhAQ")))
        #expect(!revisions.has(docID: "a", rev: rev, vector: .stored("18eebf4c4ba60000@LXNL+2sc63oxoDxxKRgLKw;18eebf4c289d0000@vHHCGAGyCjb8F0aB1CnhAQ")))
        #expect(!revisions.has(docID: "a", rev: rev, vector: .stored(nil)))
        // Not known on one side (a losing leaf here, a peer that sends no vectors): the
        // revision alone decides, as before vectors.
        #expect(revisions.has(docID: "a", rev: rev))
        revisions.record(docID: "b", rev: rev)
        #expect(revisions.has(docID: "b", rev: rev, vector: .stored("18eebf4c289d0000@vHHCGAGyCjb8F0aB1CnhAQ")))
    }

    @Test func isBoundedOldestFirst() throws {
        let revisions = PeerRevisions(capacity: 3)
        let rev = try #require(RevID("1-aa"))
        for index in 0..<10 { revisions.record(docID: "d\(index)", rev: rev) }
        #expect(revisions.count == 3)
        #expect((0..<7).allSatisfy { !revisions.has(docID: "d\($0)", rev: rev) })
        #expect((7..<10).allSatisfy { revisions.has(docID: "d\($0)", rev: rev) })
        // Recording a remembered document again keeps it and evicts no other.
        revisions.record(docID: "d8", rev: try #require(RevID("2-bb")))
        #expect(revisions.count == 3)
        for index in 10..<10_000 { revisions.record(docID: "d\(index)", rev: rev) }
        #expect(revisions.count == 3)
    }

    /// B pulls A's documents over a continuous push+pull: B's push does not offer them
    /// back (nothing checked), while B's own writes and B's edits of A's documents are
    /// offered and reach A.
    @Test func aContinuousLinkDoesNotOfferBackWhatItReceived() async throws {
        try await withNodes(2) { nodes in
            let (a, b) = (nodes[0], nodes[1])
            try await b.replicate("sync", ["remote": .string(a.syncURL), "direction": "pushAndPull", "continuous": true])
            for index in 0..<20 { _ = try await a.put("a\(index)", ["n": .int(Int64(index))]) }
            let pulled = try await eventually { try await b.replicationStatus("sync")["docs_pulled"] == 20 }
            #expect(pulled)
            try await Task.sleep(for: .milliseconds(500))
            let status = try await b.replicationStatus("sync")
            #expect(status["docs_checked_push"] == 0, "\(status)")

            _ = try await b.put("b0", ["from": "b"])
            let edited = try await b.request("PUT", "/db/a3", json: ["n": 33, "_rev": .string(try await revision(b, "a3"))])
            #expect(edited.status == 201)
            let reached = try await eventually {
                let created = try await a.request("GET", "/db/b0").status == 200
                let copied = try await a.request("GET", "/db/a3").json["n"] == 33
                return created && copied
            }
            #expect(reached)
            let after = try await b.replicationStatus("sync")
            #expect(after["docs_checked_push"] == 2, "\(after)")
            #expect(after["docs_pushed"] == 2, "\(after)")
        }
    }

    private func revision(_ node: TestNode, _ id: String) async throws -> String {
        try #require(try await node.request("GET", "/db/\(id)").json["_rev"]?.stringValue)
    }
}
