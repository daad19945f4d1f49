@testable import Discovery
import Testing

/// The TXT record crosses Avahi as a string list both ways: registering parses our wire
/// bytes into one (`avahi_string_list_parse`), resolving serializes Avahi's back to wire
/// bytes. Real libavahi-common, no daemon needed.
@Suite("Avahi string lists (TXT records through libavahi-common)")
struct AvahiStringListTests {
    /// Our record → Avahi's list → wire bytes → our record: the same entries, in order.
    @Test func aTXTRecordSurvivesAvahisStringList() throws {
        let record = TXTRecord(["id": "node-1", "db": "orders,users", "proto": "1", "group": "Orders!"])
        let wire = try record.encoded()
        var back: [UInt8] = []
        let status = AvahiCallbacks.withStringList(wire) { list in
            back = AvahiCallbacks.wireBytes(of: list)
            return AvahiStatus.ok
        }
        #expect(status == AvahiStatus.ok)
        #expect(back == wire)
        #expect(TXTRecord(decoding: back) == record)
    }

    /// Empty values, key-only entries and binary values pass unchanged.
    @Test func oddEntriesSurvive() throws {
        let record = TXTRecord(entries: [
            .init(key: "flag", value: nil), .init(key: "empty", value: []), .init(key: "bin", value: [0, 255, 61, 10]),
        ])
        let wire = try record.encoded()
        var back: [UInt8] = []
        _ = AvahiCallbacks.withStringList(wire) { list in
            back = AvahiCallbacks.wireBytes(of: list)
            return AvahiStatus.ok
        }
        #expect(TXTRecord(decoding: back) == record)
    }

    /// Malformed wire bytes (a length past the end) are refused by Avahi's parser, and the
    /// body is not run.
    @Test func malformedWireBytesAreRefused() {
        var ran = false
        let status = AvahiCallbacks.withStringList([9, 65, 66]) { _ in
            ran = true
            return AvahiStatus.ok
        }
        #expect(status != AvahiStatus.ok)
        #expect(!ran)
    }
}
