import Testing

@testable import BLIP

@Suite struct BLIPVarintTests {
    @Test(arguments: [
        UInt64(0), 1, 0x7F, 0x80, 0xFF, 0x3FFF, 0x4000, 50_000, 128_000, 1 << 32, UInt64(Int64.max), UInt64.max,
    ])
    func roundTrip(_ value: UInt64) throws {
        let bytes = BLIPVarint.encode(value)
        #expect(bytes.count == BLIPVarint.encodedLength(value))
        let (decoded, length) = try BLIPVarint.decode(bytes)
        #expect(decoded == value)
        #expect(length == bytes.count)
    }

    @Test func knownEncodings() {
        #expect(BLIPVarint.encode(0) == [0x00])
        #expect(BLIPVarint.encode(0x7F) == [0x7F])
        #expect(BLIPVarint.encode(0x80) == [0x80, 0x01])
        #expect(BLIPVarint.encode(300) == [0xAC, 0x02])
        #expect(BLIPVarint.encode(UInt64.max) == [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
    }

    @Test func randomRoundTrips() throws {
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<5000 {
            let bits = UInt64.random(in: 0...63, using: &generator)
            let value = UInt64.random(in: 0...UInt64.max, using: &generator) >> bits
            var bytes: [UInt8] = [0xAA]
            BLIPVarint.encode(value, into: &bytes)
            bytes.append(0x55)  // trailing data is not consumed
            let (decoded, length) = try BLIPVarint.decode(bytes.dropFirst())
            #expect(decoded == value)
            #expect(length == BLIPVarint.encodedLength(value))
        }
    }

    @Test func decodesPrefixOnly() throws {
        let (value, length) = try BLIPVarint.decode([0x05, 0xFF, 0xFF])
        #expect(value == 5)
        #expect(length == 1)
    }

    @Test func emptyInputIsTruncated() {
        #expect(throws: BLIPVarint.DecodeError.truncated) { try BLIPVarint.decode([UInt8]()) }
    }

    @Test func everyProperPrefixIsTruncated() {
        let bytes = BLIPVarint.encode(UInt64.max)
        for length in 0..<bytes.count {
            #expect(throws: BLIPVarint.DecodeError.truncated) { try BLIPVarint.decode(bytes.prefix(length)) }
        }
    }

    @Test func overflowIsRejected() {
        // 10th byte may only carry one bit.
        let tooBig: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02]
        #expect(throws: BLIPVarint.DecodeError.overflow) { try BLIPVarint.decode(tooBig) }
        // Eleven bytes.
        let tooLong = [UInt8](repeating: 0x80, count: 10) + [0x00]
        #expect(throws: BLIPVarint.DecodeError.overflow) { try BLIPVarint.decode(tooLong) }
        let endless = [UInt8](repeating: 0xFF, count: 100)
        #expect(throws: BLIPVarint.DecodeError.overflow) { try BLIPVarint.decode(endless) }
    }

    @Test func nonMinimalEncodingsAreAccepted() throws {
        #expect(try BLIPVarint.decode([0x80, 0x00]).value == 0)
        #expect(try BLIPVarint.decode([0x81, 0x80, 0x00]).value == 1)
    }
}
