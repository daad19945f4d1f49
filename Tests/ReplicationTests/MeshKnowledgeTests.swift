import BLIP
import DocumentModel
import Testing
import TestSupport

@testable import Replication

/// The parts of "offers as knowledge" (docs/architecture.md §10.10) on their own: what a
/// receiver covers of a peer's feed (`CoverageBook`), where revisions arrived from
/// (`MeshKnowledge`), and what a peer's reports let a sender leave out (`PeerCoverage`).
/// Safety first: knowledge is only ever lost, never invented.
@Suite struct MeshKnowledgeTests {
    @Test func anEntryIsCoveredOnceEveryRevisionItOfferedIsHere() {
        var book = CoverageBook()
        // Seq 1: had it. Seq 2: two leaves asked for. Seq 3: one asked for. Seq 4: had both rows.
        let now = book.add([(1, nil), (2, "d2\u{0}a"), (2, "d2\u{0}b"), (3, "d3\u{0}a"), (4, nil), (4, nil), (nil, nil)])
        #expect(now == [1, 4])
        #expect(book.finish("d2\u{0}a", failed: false) == nil, "one leaf of seq 2 is still awaited")
        #expect(book.finish("d2\u{0}b", failed: false) == 2)
        // A failed revision leaves its entry uncovered for good.
        #expect(book.finish("d3\u{0}a", failed: true) == nil)
        #expect(book.finish("d3\u{0}a", failed: false) == nil, "finished twice: nothing more")
        // An entry of two leaves with one failure is not covered either way round.
        _ = book.add([(5, "d5\u{0}a"), (5, "d5\u{0}b")])
        #expect(book.finish("d5\u{0}a", failed: true) == nil)
        #expect(book.finish("d5\u{0}b", failed: false) == nil)
        #expect(book.finish("unknown", failed: false) == nil)
    }

    @Test func arrivalsAreRememberedByRevision() throws {
        let knowledge = MeshKnowledge()
        let rev = try #require(RevID("1-abc"))
        let key = MeshKnowledge.key(docID: "doc", rev: rev)
        #expect(key == MeshKnowledge.key(docID: "doc", rev: rev))
        #expect(key != MeshKnowledge.key(docID: "doc2", rev: rev) && key != MeshKnowledge.key(docID: "doc", rev: RevID("2-abc")!))
        #expect(knowledge.arrivals([key]) == [nil])
        let source = knowledge.source("store-a")
        #expect(source != 0 && knowledge.source("store-a") == source && knowledge.source("store-b") != source)
        let arrival = MeshKnowledge.Arrival(source: source, sequence: 40, link: 7)
        knowledge.recordArrivals([(key, arrival)])
        #expect(knowledge.arrivals([key, key &+ 1, 0]) == [arrival, nil, nil])
        // Beyond the capacity, the oldest are forgotten first.
        let others = (1...MeshKnowledge.arrivalCapacity).map { (key &+ $0, MeshKnowledge.Arrival(source: source, sequence: UInt64($0), link: 7)) }
        knowledge.recordArrivals(Array(others.prefix(10)))
        #expect(knowledge.arrivals([key]) == [arrival])
        knowledge.recordArrivals(Array(others.dropFirst(10)))
        #expect(knowledge.arrivals([key]) == [nil])
        #expect(knowledge.arrivals([key &+ 1, key &+ MeshKnowledge.arrivalCapacity]).map { $0?.sequence } == [1, UInt64(MeshKnowledge.arrivalCapacity)])
        // An arrival recorded before its connection's peer named its store takes that store.
        let unnamed = MeshKnowledge.Arrival(source: 0, sequence: 5, link: 9)
        knowledge.recordArrivals([(key, unnamed)])
        #expect(knowledge.arrivals([key]).first??.source == 0)
        knowledge.name(link: 9, source: source)
        #expect(knowledge.arrivals([key]).first??.source == source)
    }

    @Test func reportersGetEverythingFirstThenWhatGrew() {
        let knowledge = MeshKnowledge()
        let a = knowledge.source("store-a")
        knowledge.cover(source: a, [1, 2, 3])
        knowledge.cover(source: 0, [9])  // an unnamed source is never covered
        let first = knowledge.openReport(serial: 1)
        #expect(first.mapValues(\.description) == ["store-a": "1-3"])
        #expect(knowledge.takeReport(serial: 1).isEmpty)
        knowledge.cover(source: a, [5])
        knowledge.cover(source: knowledge.source("store-b"), [1])
        #expect(knowledge.takeReport(serial: 1).mapValues(\.description) == ["store-a": "5", "store-b": "1"])
        // A source followed before anything of it is covered is reported, empty.
        knowledge.follow(source: knowledge.source("store-c"))
        #expect(knowledge.takeReport(serial: 1).mapValues(\.description) == ["store-c": ""])
        knowledge.closeReport(serial: 1)
        #expect(knowledge.coverage(of: "store-a").description == "1-3,5")
    }

    @Test func aPeersReportsSayWhatItHolds() {
        let knowledge = MeshKnowledge()
        let coverage = PeerCoverage(knowledge: knowledge)
        let a = knowledge.source("store-a")
        let peer = knowledge.source("store-peer")
        let viaA = MeshKnowledge.Arrival(source: a, sequence: 10, link: coverage.serial &+ 1)
        let viaAUncovered = MeshKnowledge.Arrival(source: a, sequence: 30, link: coverage.serial &+ 1)
        let overThisLink = MeshKnowledge.Arrival(source: peer, sequence: 99, link: coverage.serial)
        let fromPeerEarlier = MeshKnowledge.Arrival(source: peer, sequence: 10, link: coverage.serial &+ 1)
        let unnamed = MeshKnowledge.Arrival(source: 0, sequence: 10, link: coverage.serial &+ 1)
        // Before any report only what came over this connection is held.
        #expect(coverage.holding([viaA, overThisLink, nil]) == [.unknown, .held, .unknown])

        let report = PeerCoverage.report(
            store: "store-peer", ["store-a": SequenceRanges([1...20]), "store-peer": SequenceRanges([1...20])], live: ["store-a"])
        #expect(coverage.record(report))
        #expect(coverage.peerSource == peer)
        let farAhead = MeshKnowledge.Arrival(source: a, sequence: 20 + PeerCoverage.comingWindow + 1, link: coverage.serial &+ 1)
        #expect(coverage.holding([viaA, viaAUncovered, overThisLink, fromPeerEarlier, unnamed, farAhead])
            == [.held, .coming, .held, .unknown, .unknown, .unknown])
        // A source the peer no longer receives from: nothing is coming from there.
        #expect(coverage.record(PeerCoverage.report(store: "store-peer", [:], live: [])))
        #expect(coverage.holding([viaA, viaAUncovered]) == [.held, .unknown])
        // This database follows the peer's store while the connection lives.
        #expect(knowledge.liveSources().uuids == ["store-peer"])
        coverage.end()
        coverage.end()
        #expect(knowledge.liveSources().uuids.isEmpty)
    }

    @Test func entriesThePeerSaysWeHoldAreCovered() {
        let knowledge = MeshKnowledge()
        let coverage = PeerCoverage(knowledge: knowledge)
        // The peer left every leaf of its entries 1-5 and 9 out of its offers: we hold them.
        #expect(coverage.record(PeerCoverage.report(store: "store-peer", ["store-peer": SequenceRanges([1...5, 9...9])])))
        #expect(knowledge.coverage(of: "store-peer").description == "1-5,9")
        // And we tell our peer the same of our feed, once.
        coverage.peerHolds([7, 8, 3])
        #expect(coverage.takeYours().description == "3,7-8")
        #expect(coverage.takeYours().isEmpty)
    }

    @Test func malformedReportsAreDroppedWhole() {
        let coverage = PeerCoverage(knowledge: MeshKnowledge())
        let bodies: [[UInt8]] = [Array("not json".utf8), Array("[1]".utf8), Array(#"{"a":"1-x"}"#.utf8), Array(#"{"a":5}"#.utf8),
                                 Array(#"{"a":"1-2","b":"3-1"}"#.utf8)]
        for body in bodies {
            #expect(!coverage.record(BLIPMessage(profile: PeerCoverage.profile, properties: [("store", "p")], body: body)))
        }
        #expect(!coverage.record(BLIPMessage(profile: PeerCoverage.profile, properties: [], body: Array("{}".utf8))))
        #expect(coverage.peerSource == 0, "nothing of a dropped report is kept")
        let a = coverage.knowledge.source("a")
        #expect(coverage.holding([MeshKnowledge.Arrival(source: a, sequence: 1, link: coverage.serial &+ 1)]) == [.unknown])
    }
}
