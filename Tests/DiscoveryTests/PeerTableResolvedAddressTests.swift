@testable import Discovery
import Testing

/// A resolver that brings the host's address (the engine asks Avahi for it): the peer is
/// reported without any address query; a resolver without an address still gets one.
@Suite("Peer table: addresses from the resolver")
struct PeerTableResolvedAddressTests {
    @Test func aResolverWithAnAddressNeedsNoAddressQuery() {
        var table = TableFixture.table()
        let effects = TableFixture.resolve(&table, "n1", address: "10.0.0.7", port: 5000)
        #expect(effects == [.emit(.added(TableFixture.peer("n1", "10.0.0.7", port: 5000)))])
        #expect(table.queriedHosts.isEmpty)
    }

    @Test func aNewAddressFromTheResolverIsAnUpdate() {
        var table = TableFixture.table()
        TableFixture.resolve(&table, "n1", address: "10.0.0.1")
        let moved = TableFixture.resolve(&table, "n1", address: "10.0.0.2")
        #expect(moved == [.emit(.updated(TableFixture.peer("n1", "10.0.0.2")))])
    }

    @Test func aResolverThatLosesItsAddressFallsBackToAQuery() {
        var table = TableFixture.table()
        TableFixture.resolve(&table, "n1", address: "10.0.0.1")
        // Answered without an address: the query starts, and the last address reported stands meanwhile.
        #expect(TableFixture.resolve(&table, "n1", host: "h2.local.", address: nil) == [.startAddressQuery(host: "h2.local.")])
        #expect(table.peers["n1"]?.host == "10.0.0.1")
        #expect(table.addressAdded(host: "h2.local.", address: "10.0.0.3") == [
            .emit(.updated(TableFixture.peer("n1", "10.0.0.3"))),
        ])
        // The resolver has the address again: the query is no longer needed.
        #expect(TableFixture.resolve(&table, "n1", host: "h2.local.", address: "10.0.0.3") == [.stopAddressQuery(host: "h2.local.")])
    }
}
