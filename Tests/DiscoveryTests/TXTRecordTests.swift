import Testing

@testable import Discovery

@Suite("TXT record codec")
struct TXTRecordTests {
    @Test func encodesLengthPrefixedStrings() throws {
        let txt = TXTRecord(["id": "n1", "db": "a,b"])
        let bytes = try txt.encoded()
        #expect(bytes == [5] + Array("id=n1".utf8) + [6] + Array("db=a,b".utf8))
    }

    @Test func decodesWhatItEncodes() throws {
        let txt = TXTRecord(entries: [
            .init(key: "id", string: "node-1"),
            .init(key: "flag", value: nil),
            .init(key: "empty", value: []),
            .init(key: "bin", value: [0, 255, 61]),
        ])
        let decoded = TXTRecord(decoding: try txt.encoded())
        #expect(decoded == txt)
        #expect(decoded["id"] == "node-1")
        #expect(decoded["flag"] == nil)
        #expect(decoded.contains(key: "flag"))
        #expect(decoded["empty"] == "")
        #expect(decoded.entry(forKey: "bin")?.value == [0, 255, 61])
    }

    @Test func looksKeysUpByNameWhateverTheOrder() {
        // Avahi hands TXT records back in the reverse of the registered order.
        let reversed: [UInt8] = [7] + Array("proto=1".utf8) + [6] + Array("db=a,b".utf8) + [5] + Array("id=n1".utf8)
        let txt = TXTRecord(decoding: reversed)
        #expect(txt.entries.map(\.key) == ["proto", "db", "id"])
        #expect(txt["id"] == "n1")
        #expect(txt["db"] == "a,b")
        #expect(txt["proto"] == "1")
    }

    @Test func keysAreCaseInsensitiveAndTheFirstOccurrenceWins() {
        let bytes: [UInt8] = [4] + Array("ID=a".utf8) + [4] + Array("id=b".utf8)
        let txt = TXTRecord(decoding: bytes)
        #expect(txt["id"] == "a")
        #expect(txt["Id"] == "a")
    }

    @Test func decodingIsLenient() {
        // An empty string is skipped, "=x" (no key) is skipped, a length past the end stops.
        let bytes: [UInt8] = [0, 2] + Array("=x".utf8) + [3] + Array("a=1".utf8) + [9] + Array("b=2".utf8)
        let txt = TXTRecord(decoding: bytes)
        #expect(txt.entries == [.init(key: "a", string: "1")])
        #expect(TXTRecord(decoding: []).entries.isEmpty)
        #expect(TXTRecord(decoding: [0]).entries.isEmpty)
    }

    @Test func anEmptyRecordIsOneEmptyString() throws {
        #expect(try TXTRecord().encoded() == [0])
    }

    @Test func rejectsBadKeysAndLongEntries() throws {
        #expect(throws: TXTRecordError.invalidKey("")) { try TXTRecord(["": "x"]).encoded() }
        #expect(throws: TXTRecordError.invalidKey("a=b")) { try TXTRecord(["a=b": "x"]).encoded() }
        #expect(throws: TXTRecordError.invalidKey("kï")) { try TXTRecord(["kï": "x"]).encoded() }
        let fits = String(repeating: "v", count: 253)  // "k=" + 253 = 255 bytes
        #expect(try TXTRecord(["k": fits]).encoded().count == 256)
        #expect(throws: TXTRecordError.entryTooLong(key: "k", length: 256)) {
            try TXTRecord(["k": fits + "v"]).encoded()
        }
    }

    @Test func valuesAreUTF8() throws {
        let txt = TXTRecord(["db": "café,日本"])
        #expect(TXTRecord(decoding: try txt.encoded())["db"] == "café,日本")
    }
}
