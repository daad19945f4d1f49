import Testing

@testable import Discovery

@Suite("Service advertisement (TXT keys)")
struct ServiceAdvertisementTests {
    private func configuration(databases: [String] = ["orders", "users"]) -> DiscoveryConfiguration {
        DiscoveryConfiguration(nodeID: "node-1", group: "Orders", port: 4984, databases: databases)
    }

    @Test func advertisesIdDbProtoGroup() throws {
        let txt = ServiceAdvertisement(configuration: configuration()).txtRecord()
        #expect(txt.entries.map(\.key) == ["id", "db", "proto", "group"])
        #expect(txt["id"] == "node-1")
        #expect(txt["db"] == "orders,users")
        #expect(txt["proto"] == "1")
        #expect(txt["group"] == "Orders")
    }

    @Test func roundTripsThroughTheWireInAnyOrder() throws {
        let advertisement = ServiceAdvertisement(configuration: configuration())
        var txt = advertisement.txtRecord()
        #expect(ServiceAdvertisement(txt: TXTRecord(decoding: try txt.encoded())) == advertisement)
        txt.entries.reverse()  // what Avahi returns
        #expect(ServiceAdvertisement(txt: TXTRecord(decoding: try txt.encoded())) == advertisement)
    }

    @Test func longDatabaseListsAreChunked() throws {
        let databases = (0..<100).map { "database-\($0)" }
        let advertisement = ServiceAdvertisement(configuration: configuration(databases: databases))
        var txt = advertisement.txtRecord()
        #expect(txt.contains(key: "db1"))
        let bytes = try txt.encoded()  // every entry fits in 255 bytes, or this throws
        #expect(ServiceAdvertisement(txt: TXTRecord(decoding: bytes)).databases == databases)
        txt.entries.reverse()
        #expect(ServiceAdvertisement(txt: TXTRecord(decoding: try txt.encoded())).databases == databases)
    }

    @Test func chunksSplitOnCharacterBoundaries() {
        let joined = String(repeating: "é", count: 200)  // 400 bytes
        let chunks = ServiceAdvertisement.chunks(of: joined)
        #expect(chunks.count == 2)
        #expect(chunks.allSatisfy { $0.utf8.count <= ServiceAdvertisement.databaseChunkLength })
        #expect(chunks.joined() == joined)
        #expect(ServiceAdvertisement.chunks(of: "") == [""])
    }

    @Test func readsMissingAndEmptyKeys() {
        let bare = ServiceAdvertisement(txt: TXTRecord())
        #expect(bare.nodeID == nil)
        #expect(bare.databases == [])
        #expect(bare.protocolVersion == nil)
        #expect(bare.group == nil)
        let empty = ServiceAdvertisement(txt: TXTRecord(["id": "", "db": ",,a,"]))
        #expect(empty.nodeID == nil)
        #expect(empty.databases == ["a"])
    }

    @Test func groupMembership() {
        let noGroup = ServiceAdvertisement(nodeID: "x", databases: [], protocolVersion: nil, group: nil)
        #expect(noGroup.isMember(ofGroup: "anything"))
        let orders = ServiceAdvertisement(nodeID: "x", databases: [], protocolVersion: nil, group: "orders")
        #expect(orders.isMember(ofGroup: "orders"))
        #expect(!orders.isMember(ofGroup: "Orders"))
        #expect(!orders.isMember(ofGroup: "orders!"))
        let long = String(repeating: "g", count: 300)
        let longAd = ServiceAdvertisement(
            nodeID: "x", databases: [], protocolVersion: nil, group: ServiceNaming.txtGroupValue(for: long)
        )
        #expect(longAd.isMember(ofGroup: long))
    }
}
