import Testing

@testable import BLIP

@Suite struct BLIPMessageTests {
    @Test func subscriptReadsFirstValueAndSetsInPlace() {
        var message = BLIPMessage(profile: "getCheckpoint", properties: [("client", "a"), ("client", "b")])
        #expect(message.profile == "getCheckpoint")
        #expect(message["client"] == "a")
        message["client"] = "c"
        #expect(message.properties.map(\.1) == ["getCheckpoint", "c", "b"])
        message["new"] = "x"
        #expect(message.properties.last?.0 == "new")
        message["client"] = nil
        #expect(message["client"] == nil)
        #expect(message.properties.count == 2)
    }

    @Test func equalityIsOrderSensitive() {
        let a = BLIPMessage(properties: [("a", "1"), ("b", "2")], body: [1])
        let b = BLIPMessage(properties: [("b", "2"), ("a", "1")], body: [1])
        #expect(a == a)
        #expect(a != b)
        var c = a
        c.urgent = true
        #expect(a != c)
    }

    @Test func encodingLayout() {
        let message = BLIPMessage(properties: [("Profile", "x"), ("k", "")], body: [0xAB])
        // "Profile\0x\0k\0\0" = 8 + 2 + 2 + 1 = 13 bytes
        #expect(message.encodedData() == [13] + Array("Profile".utf8) + [0] + [UInt8(ascii: "x"), 0]
            + [UInt8(ascii: "k"), 0, 0] + [0xAB])
    }

    @Test func emptyMessageStillHasZeroLength() {
        #expect(BLIPMessage().encodedData() == [0])
        #expect(BLIPMessage(body: [1, 2]).encodedData() == [0, 1, 2])
    }

    @Test func nulCharactersInStringsAreDropped() {
        let message = BLIPMessage(properties: [("a\u{0}b", "c\u{0}")])
        let data = message.encodedData()
        #expect(data == [5, UInt8(ascii: "a"), UInt8(ascii: "b"), 0, UInt8(ascii: "c"), 0])
        let decoded = BLIPMessage.decodeProperties(data[1...])
        #expect((try? decoded.get())?.first?.0 == "ab")
    }

    @Test func unicodeRoundTrip() throws {
        let properties = [("Ünïcødé-ключ", "値 🐟 shoal"), ("", "empty key"), ("empty value", "")]
        let data = BLIPMessage(properties: properties).encodedData()
        let (length, size) = try BLIPVarint.decode(data)
        let decoded = try BLIPMessage.decodeProperties(data[size..<(size + Int(length))]).get()
        #expect(propertiesEqual(decoded, properties))
    }

    @Test func malformedProperties() {
        func failure(_ bytes: [UInt8]) -> BLIPError? {
            if case .failure(let error) = BLIPMessage.decodeProperties(bytes[...]) { return error }
            return nil
        }
        #expect(failure([]) == nil)
        #expect(failure([UInt8(ascii: "a"), 0, UInt8(ascii: "b"), 0]) == nil)
        #expect(failure([UInt8(ascii: "a"), 0, UInt8(ascii: "b")])?.message.contains("NUL-terminated") == true)
        #expect(failure([UInt8(ascii: "a"), 0])?.message.contains("odd") == true)
        #expect(failure([0, 0, 0])?.message.contains("odd") == true)
        #expect(failure([0xFF, 0, UInt8(ascii: "b"), 0])?.message.contains("UTF-8") == true)
        #expect(failure([UInt8(ascii: "a"), 0, 0xC3, 0])?.message.contains("UTF-8") == true)
        #expect(failure([0, 0]) == nil)  // empty key, empty value
    }

    /// The ASCII fast path and the validating path give what `String(validating:)` gives
    /// string by string, from slices that start anywhere in their array.
    @Test func decodedStringsMatchUTF8Validation() {
        var generator = SeededGenerator(seed: 41)
        let alphabet: [[UInt8]] = [
            Array("a".utf8), Array("Z9-_@".utf8), Array("é".utf8), Array("🐟".utf8), [0xC3], [0xFF], [0x80], [0x7F],
        ]
        for _ in 0..<3000 {
            var strings: [[UInt8]] = []
            for _ in 0..<(2 * Int.random(in: 1...4, using: &generator)) {
                var string: [UInt8] = []
                for _ in 0..<Int.random(in: 0...6, using: &generator) {
                    string += alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]
                }
                strings.append(string)
            }
            let prefix = generator.bytes(Int.random(in: 0...3, using: &generator))
            let data = prefix + strings.flatMap { $0 + [0] }
            let expected = strings.map { String(validating: $0, as: UTF8.self) }
            switch BLIPMessage.decodeProperties(data[prefix.count...]) {
            case .success(let pairs):
                #expect(expected.allSatisfy { $0 != nil })
                #expect(pairs.flatMap { [$0.0, $0.1] } == expected.compactMap { $0 })
            case .failure(let error):
                #expect(expected.contains { $0 == nil })
                #expect(error.message.contains("UTF-8"))
            }
        }
    }

    @Test func errorReplyRoundTrip() {
        let error = BLIPError(domain: "HTTP", code: 409, message: "conflict", properties: [("X-Doc", "d1")])
        let message = error.errorMessage()
        #expect(message["Error-Domain"] == "HTTP")
        #expect(message["Error-Code"] == "409")
        #expect(BLIPError(errorReply: message) == error)
    }

    @Test func errorReplyDefaults() {
        let noCode = BLIPError(errorReply: BLIPMessage(body: Array("boom".utf8)))
        #expect(noCode.domain == "BLIP")
        #expect(noCode.code == BLIPError.Code.unspecified)
        #expect(noCode.message == "boom")
        let badCode = BLIPError(errorReply: BLIPMessage(properties: [("Error-Code", "99999999999")]))
        #expect(badCode.code == BLIPError.Code.unspecified)
        let negative = BLIPError(errorReply: BLIPMessage(properties: [("Error-Code", "-7")]))
        #expect(negative.code == -7)
    }

    @Test func errorCloseCodes() {
        #expect(BLIPError.protocolError("x").webSocketCloseCode == 1002)
        #expect(BLIPError.connectionClosed.webSocketCloseCode == 1011)
        #expect(BLIPError(domain: "WebSocket", code: 1008).webSocketCloseCode == 1008)
        #expect(BLIPError.protocolError("x").isProtocolError)
    }
}
