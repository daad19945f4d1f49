@testable import Discovery
import Testing

/// A resolver that brings the host's address (the engine asks Avahi for it): the peer is
/// reported without any address query; a resolver without an address still gets one.
@Suite("Peer table: addresses from the resolver")
struct PeerTableResolvedAddressTests {
    @Test func aResolverWithAnAddressNeedsNoAddressQuery() {
        var table = TableFixture.table()
        #expect(table.browseAdded(instance: "n1", interface: 2, domain: "local.") == [
            .startResolve(instance: "n1", domain: "local."),
        ])
        let effects = table.resolved(
            instance: "n1", hostTarget: "h1.local.", port: 5000, txt: TableFixture.txt(id: "n1"), address: "10.0.0.7")
        #expect(effects == [.emit(.added(TableFixture.peer("n1", "10.0.0.7", port: 5000)))])
        #expect(table.queriedHosts.isEmpty)
    }

    @Test func aNewAddressFromTheResolverIsAnUpdate() {
        var table = TableFixture.table()
        _ = table.browseAdded(instance: "n1", interface: 2, domain: "local.")
        _ = table.resolved(instance: "n1", hostTarget: "h1.local.", port: 4984, txt: TableFixture.txt(id: "n1"), address: "10.0.0.1")
        let moved = table.resolved(
            instance: "n1", hostTarget: "h1.local.", port: 4984, txt: TableFixture.txt(id: "n1"), address: "10.0.0.2")
        #expect(moved == [.emit(.updated(TableFixture.peer("n1", "10.0.0.2")))])
    }

    @Test func aResolverThatLosesItsAddressFallsBackToAQuery() {
        var table = TableFixture.table()
        _ = table.browseAdded(instance: "n1", interface: 2, domain: "local.")
        _ = table.resolved(instance: "n1", hostTarget: "h1.local.", port: 4984, txt: TableFixture.txt(id: "n1"), address: "10.0.0.1")
        // Answered without an address: the query starts, and the last address reported stands meanwhile.
        let effects = table.resolved(instance: "n1", hostTarget: "h2.local.", port: 4984, txt: TableFixture.txt(id: "n1"))
        #expect(effects == [.startAddressQuery(host: "h2.local.")])
        #expect(table.peers["n1"]?.host == "10.0.0.1")
        #expect(table.addressAdded(host: "h2.local.", address: "10.0.0.3") == [
            .emit(.updated(TableFixture.peer("n1", "10.0.0.3"))),
        ])
        // The resolver has the address again: the query is no longer needed.
        let back = table.resolved(
            instance: "n1", hostTarget: "h2.local.", port: 4984, txt: TableFixture.txt(id: "n1"), address: "10.0.0.3")
        #expect(back == [.stopAddressQuery(host: "h2.local.")])
    }
}
