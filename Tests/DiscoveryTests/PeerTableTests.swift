import Testing

@testable import Discovery

/// Helpers shared by the peer table tests.
enum TableFixture {
    static func table() -> PeerTable { PeerTable(ownNodeID: "me", group: "orders") }

    static func txt(id: String?, db: String = "orders", proto: String = "1", group: String? = "orders") -> TXTRecord {
        var txt = TXTRecord()
        if let id { txt.append(key: "id", value: id) }
        txt.append(key: "db", value: db)
        txt.append(key: "proto", value: proto)
        if let group { txt.append(key: "group", value: group) }
        return txt
    }

    static func peer(_ id: String, _ host: String, port: Int = 4984, db: [String] = ["orders"]) -> DiscoveredPeer {
        DiscoveredPeer(nodeID: id, host: host, port: port, databases: db, protocolVersion: "1", source: .mdns)
    }

    static func events(_ effects: [PeerTable.Effect]) -> [DiscoveryEvent] {
        effects.compactMap { if case .emit(let event) = $0 { event } else { nil } }
    }

    /// Browses, resolves and addresses `name` in one go; returns the effects of the last step.
    @discardableResult
    static func discover(
        _ table: inout PeerTable, _ name: String, host: String = "h1.local.", address: String = "10.0.0.1",
        port: Int = 4984, txt: TXTRecord? = nil, interface: UInt32 = 2
    ) -> [PeerTable.Effect] {
        _ = table.browseAdded(instance: name, interface: interface, domain: "local.")
        _ = table.resolved(instance: name, hostTarget: host, port: port, txt: txt ?? Self.txt(id: name))
        return table.addressAdded(host: host, address: address)
    }

    /// Browses `name` and resolves it with the address the resolver brought (nil: none);
    /// returns the effects of the resolve.
    @discardableResult
    static func resolve(
        _ table: inout PeerTable, _ name: String, host: String = "h1.local.", address: String?, port: Int = 4984
    ) -> [PeerTable.Effect] {
        _ = table.browseAdded(instance: name, interface: 2, domain: "local.")
        return table.resolved(instance: name, hostTarget: host, port: port, txt: txt(id: name), address: address)
    }
}

@Suite("Peer table: discovery")
struct PeerTableTests {
    @Test func browseResolveAddressThenAdded() {
        var table = TableFixture.table()
        #expect(table.browseAdded(instance: "n1", interface: 2, domain: "local.") == [
            .startResolve(instance: "n1", domain: "local."),
        ])
        #expect(table.resolved(instance: "n1", hostTarget: "h1.local.", port: 5000, txt: TableFixture.txt(id: "n1")) == [
            .startAddressQuery(host: "h1.local."),
        ])
        #expect(table.addressAdded(host: "H1.local", address: "10.0.0.1") == [
            .emit(.added(TableFixture.peer("n1", "10.0.0.1", port: 5000))),
        ])
        #expect(table.peers == ["n1": TableFixture.peer("n1", "10.0.0.1", port: 5000)])
    }

    @Test func severalInterfacesAreOneInstance() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "n1", interface: 2)
        #expect(table.browseAdded(instance: "n1", interface: 3, domain: "local.") == [])
        #expect(table.browseRemoved(instance: "n1", interface: 2) == [])
        #expect(table.browseRemoved(instance: "n1", interface: 3) == [
            .stopResolve(instance: "n1"),
            .stopAddressQuery(host: "h1.local."),
            .emit(.removed(nodeID: "n1")),
        ])
        #expect(table.browseRemoved(instance: "n1", interface: 3) == [])
        #expect(table.instances.isEmpty && table.addresses.isEmpty)
    }

    @Test func neverReportsItself() {
        var table = TableFixture.table()
        #expect(table.browseAdded(instance: "me", interface: 2, domain: "local.") == [])
        // Another instance name that carries this node's ID (e.g. a renamed copy).
        let effects = TableFixture.discover(&table, "me (2)", txt: TableFixture.txt(id: "me"))
        #expect(TableFixture.events(effects).isEmpty)
        #expect(table.peers.isEmpty)
    }

    @Test func followsARenamedRegistration() {
        var table = TableFixture.table()
        _ = table.browseAdded(instance: "me #2", interface: 2, domain: "local.")
        #expect(table.registered(as: "me #2") == [.stopResolve(instance: "me #2")])
        #expect(table.browseAdded(instance: "me #2", interface: 2, domain: "local.") == [])
    }

    @Test func ignoresOtherGroupsButAcceptsPeersWithoutGroupKey() {
        var table = TableFixture.table()
        let other = TableFixture.discover(&table, "x", txt: TableFixture.txt(id: "x", group: "Orders!"))
        #expect(TableFixture.events(other).isEmpty)
        let bare = TableFixture.discover(&table, "y", host: "h2.local.", address: "10.0.0.2", txt: TableFixture.txt(id: "y", group: nil))
        #expect(TableFixture.events(bare) == [.added(TableFixture.peer("y", "10.0.0.2"))])
    }

    @Test func usesTheInstanceNameWhenThereIsNoID() {
        var table = TableFixture.table()
        let effects = TableFixture.discover(&table, "legacy", txt: TableFixture.txt(id: nil))
        #expect(TableFixture.events(effects) == [.added(TableFixture.peer("legacy", "10.0.0.1"))])
    }

    @Test func reportsChangesAsUpdates() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "n1")
        let same = table.resolved(instance: "n1", hostTarget: "h1.local.", port: 4984, txt: TableFixture.txt(id: "n1"))
        #expect(same.isEmpty)
        let newDB = table.resolved(instance: "n1", hostTarget: "h1.local.", port: 4984, txt: TableFixture.txt(id: "n1", db: "orders,x"))
        #expect(newDB == [.emit(.updated(TableFixture.peer("n1", "10.0.0.1", db: ["orders", "x"])))])
        let newPort = table.resolved(instance: "n1", hostTarget: "h1.local.", port: 6000, txt: TableFixture.txt(id: "n1", db: "orders,x"))
        #expect(TableFixture.events(newPort) == [.updated(TableFixture.peer("n1", "10.0.0.1", port: 6000, db: ["orders", "x"]))])
    }

    @Test func addressesComeAndGo() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "n1", address: "10.0.0.1")
        #expect(table.addressAdded(host: "h1.local.", address: "10.0.0.9") == [])  // first one stays in use
        #expect(table.addressRemoved(host: "h1.local.", address: "10.0.0.1") == [
            .emit(.updated(TableFixture.peer("n1", "10.0.0.9"))),
        ])
        #expect(table.addressRemoved(host: "h1.local.", address: "10.0.0.9") == [])  // the last one is kept
        #expect(table.peers["n1"]?.host == "10.0.0.9")
        #expect(table.addressAdded(host: "unknown.local.", address: "10.0.0.5") == [])  // not queried: ignored
    }

    @Test func oneAddressQueryPerHost() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "a", host: "h.local.")
        _ = table.browseAdded(instance: "b", interface: 2, domain: "local.")
        let second = table.resolved(instance: "b", hostTarget: "h.local.", port: 5000, txt: TableFixture.txt(id: "b"))
        #expect(second == [.emit(.added(TableFixture.peer("b", "10.0.0.1", port: 5000)))])
        #expect(table.browseRemoved(instance: "a", interface: 2) == [.stopResolve(instance: "a"), .emit(.removed(nodeID: "a"))])
        #expect(table.queriedHosts == ["h.local": "h.local."])
    }

    @Test func aNodeIDIsReportedOnce() {
        var table = TableFixture.table()
        TableFixture.discover(&table, "n1", host: "h1.local.", address: "10.0.0.1", txt: TableFixture.txt(id: "dup"))
        let twin = TableFixture.discover(&table, "n1 #2", host: "h2.local.", address: "10.0.0.2", txt: TableFixture.txt(id: "dup"))
        #expect(TableFixture.events(twin).isEmpty)
        #expect(table.peers["dup"]?.host == "10.0.0.1")
        let handOver = table.browseRemoved(instance: "n1", interface: 2)
        #expect(TableFixture.events(handOver) == [.updated(TableFixture.peer("dup", "10.0.0.2"))])
        let gone = table.browseRemoved(instance: "n1 #2", interface: 2)
        #expect(TableFixture.events(gone) == [.removed(nodeID: "dup")])
    }

    @Test func eventsAreSortedByNodeID() {
        var table = TableFixture.table()
        _ = table.browseAdded(instance: "b", interface: 2, domain: "local.")
        _ = table.browseAdded(instance: "a", interface: 2, domain: "local.")
        _ = table.resolved(instance: "b", hostTarget: "h.local.", port: 1, txt: TableFixture.txt(id: "b"))
        _ = table.resolved(instance: "a", hostTarget: "h.local.", port: 2, txt: TableFixture.txt(id: "a"))
        let effects = table.addressAdded(host: "h.local.", address: "10.0.0.1")
        #expect(TableFixture.events(effects) == [
            .added(TableFixture.peer("a", "10.0.0.1", port: 2)),
            .added(TableFixture.peer("b", "10.0.0.1", port: 1)),
        ])
    }
}
