import Testing

@testable import Discovery

/// Resolving on demand: every browsed peer is listed, only the wanted ones are resolved.
@Suite("Peer table: resolving on demand")
struct PeerTableOnDemandTests {
    static func table() -> PeerTable { PeerTable(ownNodeID: "me", group: "orders", onDemand: true) }

    @Test func browsedPeersAreListedNotResolved() {
        var table = Self.table()
        #expect(table.browseAdded(instance: "n1", interface: 2, domain: "local.") == [.emit(.browsed(nodeID: "n1"))])
        #expect(table.browseAdded(instance: "me", interface: 2, domain: "local.") == [])
        #expect(table.browseAdded(instance: "n1", interface: 3, domain: "local.") == [])
        #expect(table.resolving.isEmpty)
    }

    @Test func wantingStartsAndStopsTheResolverAndAddressQuery() {
        var table = Self.table()
        _ = table.browseAdded(instance: "n1", interface: 2, domain: "local.")
        _ = table.browseAdded(instance: "n2", interface: 2, domain: "local.")
        #expect(table.want(["n2", "elsewhere"]) == [.startResolve(instance: "n2", domain: "local.")])
        #expect(table.resolved(instance: "n2", hostTarget: "h2.local.", port: 4984, txt: TableFixture.txt(id: "n2")) == [
            .startAddressQuery(host: "h2.local."),
        ])
        #expect(table.addressAdded(host: "h2.local.", address: "10.0.0.2") == [.emit(.added(TableFixture.peer("n2", "10.0.0.2")))])
        // No longer wanted: the lookups stop, the peer stays reported as last resolved.
        #expect(table.want(["n1"]) == [
            .stopResolve(instance: "n2"),
            .startResolve(instance: "n1", domain: "local."),
            .stopAddressQuery(host: "h2.local."),
        ])
        #expect(table.peers["n2"] == TableFixture.peer("n2", "10.0.0.2"))
        // Wanted again: resolved and addressed again (a change is an update).
        #expect(table.want(["n1", "n2"]) == [
            .startResolve(instance: "n2", domain: "local."),
            .startAddressQuery(host: "h2.local."),
        ])
        #expect(table.resolved(instance: "n2", hostTarget: "h2.local.", port: 5000, txt: TableFixture.txt(id: "n2")) == [
            .emit(.updated(TableFixture.peer("n2", "10.0.0.2", port: 5000))),
        ])
    }

    @Test func aPeerGoneBeforeItWasResolvedIsRemovedOnce() {
        var table = Self.table()
        _ = table.browseAdded(instance: "n1", interface: 2, domain: "local.")
        _ = table.browseAdded(instance: "n1", interface: 3, domain: "local.")
        #expect(table.browseRemoved(instance: "n1", interface: 2) == [])
        #expect(table.browseRemoved(instance: "n1", interface: 3) == [.emit(.removed(nodeID: "n1"))])
        #expect(table.listed.isEmpty)
    }

    @Test func aResolvedPeerGoneIsRemovedOnce() {
        var table = Self.table()
        _ = table.want(["n1"])
        _ = table.browseAdded(instance: "n1", interface: 2, domain: "local.")
        _ = table.resolved(instance: "n1", hostTarget: "h1.local.", port: 4984, txt: TableFixture.txt(id: "n1"))
        _ = table.addressAdded(host: "h1.local.", address: "10.0.0.1")
        #expect(table.browseRemoved(instance: "n1", interface: 2) == [
            .stopResolve(instance: "n1"),
            .stopAddressQuery(host: "h1.local."),
            .emit(.removed(nodeID: "n1")),
        ])
    }

    @Test func staleListedPeersStayUntilTheSweep() {
        var table = Self.table()
        _ = table.browseAdded(instance: "n1", interface: 2, domain: "local.")
        _ = table.browseAdded(instance: "n2", interface: 2, domain: "local.")
        #expect(TableFixture.events(table.handlesLost()).isEmpty)
        _ = table.browseAdded(instance: "n2", interface: 2, domain: "local.")
        #expect(TableFixture.events(table.sweepStale()) == [.removed(nodeID: "n1")])
        #expect(table.listed == ["n2"])
    }

    @Test func withoutOnDemandNothingIsListedAndAllIsResolved() {
        var table = TableFixture.table()
        #expect(table.browseAdded(instance: "n1", interface: 2, domain: "local.") == [.startResolve(instance: "n1", domain: "local.")])
        #expect(table.want([]) == [])
        #expect(table.listed.isEmpty)
    }
}
