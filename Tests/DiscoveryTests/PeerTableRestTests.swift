import Testing

@testable import Discovery

/// A browse that rests (``DiscoveryConfiguration/browseRestsAfter``): the table keeps every
/// instance while it is closed; reopened, it forgets those not listed again.
@Suite("Peer table: a browse that rests")
struct PeerTableRestTests {
    @Test func aReopenedBrowseForgetsWhatItDidNotListAgain() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "n1")
        TableFixture.discover(&table, "n2", host: "h2.local.", address: "10.0.0.2")
        table.browseReopened()
        #expect(table.unconfirmed == ["n1", "n2"])
        // n1 is listed again (already known: nothing to do); n2 is not.
        #expect(table.browseAdded(instance: "n1", interface: 2, domain: "local.") == [])
        #expect(table.browseConfirmed() == [
            .stopResolve(instance: "n2"), .stopAddressQuery(host: "h2.local."), .emit(.removed(nodeID: "n2")),
        ])
        #expect(table.peers.keys.sorted() == ["n1"])
        #expect(table.unconfirmed.isEmpty)
    }

    @Test func everythingListedAgainChangesNothing() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "n1")
        table.browseReopened()
        _ = table.browseAdded(instance: "n1", interface: 2, domain: "local.")
        #expect(table.browseConfirmed() == [])
        #expect(table.peers.count == 1)
    }

    @Test func aNewcomerListedByTheReopenedBrowseIsResolved() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "n1")
        table.browseReopened()
        #expect(table.browseAdded(instance: "n3", interface: 2, domain: "local.") == [.startResolve(instance: "n3", domain: "local.")])
        _ = table.browseAdded(instance: "n1", interface: 2, domain: "local.")
        #expect(table.browseConfirmed() == [])
    }

    @Test func onDemandAnUnresolvedPeerThatLeftIsRemoved() {
        var table = PeerTableOnDemandTests.table()
        _ = table.browseAdded(instance: "n1", interface: 2, domain: "local.")
        _ = table.browseAdded(instance: "n2", interface: 2, domain: "local.")
        table.browseReopened()
        _ = table.browseAdded(instance: "n2", interface: 2, domain: "local.")
        #expect(table.browseConfirmed() == [.emit(.removed(nodeID: "n1"))])
    }

    @Test func ownInstanceIsNeverUnconfirmed() {
        var table = TableFixture.table()
        _ = table.registered(as: "me")
        TableFixture.discover(&table, "n1")
        table.browseReopened()
        #expect(table.unconfirmed == ["n1"])
    }

    @Test func losingTheHandlesEndsTheConfirmation() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "n1")
        table.browseReopened()
        _ = table.handlesLost()
        // The reconnect's stale sweep decides now; the confirmation removes nothing.
        #expect(table.browseConfirmed() == [])
        #expect(table.peers.count == 1)
    }
}
