import Testing

@testable import Discovery

@Suite("Peer table: failures, refresh and reconnection")
struct PeerTableResyncTests {
    @Test func aFailedResolveWaitsForItsRetry() {
        var table = TableFixture.table()
        _ = table.browseAdded(instance: "n1", interface: 2, domain: "local.")
        #expect(table.resolveFailed(instance: "n1") == [])
        #expect(table.browseAdded(instance: "n1", interface: 3, domain: "local.") == [])  // still waiting
        #expect(table.retryResolve("n1") == [.startResolve(instance: "n1", domain: "local.")])
        _ = table.browseRemoved(instance: "n1", interface: 2)
        _ = table.browseRemoved(instance: "n1", interface: 3)
        #expect(table.resolveFailed(instance: "n1") == [])  // gone: nothing to retry
        #expect(table.resolveBackoff.isEmpty)
    }

    @Test func aFailedAddressQueryWaitsForItsRetry() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "n1")
        #expect(table.addressQueryFailed(host: "h1.local.") == [])
        #expect(table.peers["n1"]?.host == "10.0.0.1")  // the known address stays in use
        #expect(table.retryAddressQuery("h1.local.") == [.startAddressQuery(host: "h1.local.")])
    }

    @Test func losingTheHandlesKeepsPeersAndResolvesAgain() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "n1")
        TableFixture.discover(&table, "n2", host: "h2.local.", address: "10.0.0.2")
        #expect(table.handlesLost() == [])
        #expect(table.hasStaleInstances)
        #expect(table.resolving.isEmpty && table.queriedHosts.isEmpty)
        #expect(table.peers.count == 2)
        // n1 is browsed again (its known host is queried again at once) and resolves to the
        // same thing: no event.
        #expect(table.browseAdded(instance: "n1", interface: 2, domain: "local.") == [
            .startResolve(instance: "n1", domain: "local."),
            .startAddressQuery(host: "h1.local."),
        ])
        #expect(table.resolved(instance: "n1", hostTarget: "h1.local.", port: 4984, txt: TableFixture.txt(id: "n1")) == [])
        #expect(table.addressAdded(host: "h1.local.", address: "10.0.0.1") == [])
        // n2 is not: the sweep reports it removed.
        #expect(table.sweepStale() == [.emit(.removed(nodeID: "n2"))])
        #expect(!table.hasStaleInstances)
        #expect(table.peers.keys.sorted() == ["n1"])
    }

    @Test func aStaleInstanceIsNotResolvedUntilBrowsedAgain() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "n1")
        _ = table.handlesLost()
        // A late result from a torn-down resolver is ignored.
        #expect(table.resolved(instance: "n1", hostTarget: "other.local.", port: 1, txt: TableFixture.txt(id: "n1")) == [])
        #expect(table.peers["n1"]?.port == 4984)
    }

    @Test func aPeerThatMovedDuringTheOutageIsUpdated() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "n1", host: "h1.local.", address: "10.0.0.1")
        _ = table.handlesLost()
        let effects = TableFixture.discover(&table, "n1", host: "h9.local.", address: "10.0.0.9")
        #expect(TableFixture.events(effects) == [.updated(TableFixture.peer("n1", "10.0.0.9"))])
        #expect(table.addresses.keys.sorted() == ["h9.local"])
    }

    @Test func withdrawnDuringResyncIsRemovedAtOnce() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "n1")
        _ = table.handlesLost()
        _ = table.browseAdded(instance: "n1", interface: 2, domain: "local.")
        let effects = table.browseRemoved(instance: "n1", interface: 2)
        #expect(effects == [
            .stopResolve(instance: "n1"), .stopAddressQuery(host: "h1.local."), .emit(.removed(nodeID: "n1")),
        ])
    }

    @Test func sweepingWithNothingStaleDoesNothing() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "n1")
        #expect(table.sweepStale() == [])
        #expect(table.peers.count == 1)
    }
}
