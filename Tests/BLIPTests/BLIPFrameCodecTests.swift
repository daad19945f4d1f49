import Testing

@testable import BLIP

/// Bitwise CRC-32 (IEEE), independent of zlib, to check the wire checksum.
func referenceCRC32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 {
            crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
        }
    }
    return ~crc
}

/// A frame built by hand: header, raw body, and an explicit checksum.
func rawFrame(number: UInt64, flags: UInt64, body: [UInt8], checksum: UInt32?) -> [UInt8] {
    var frame = BLIPVarint.encode(number) + BLIPVarint.encode(flags) + body
    if let checksum {
        frame += [UInt8(checksum >> 24), UInt8(truncatingIfNeeded: checksum >> 16),
                  UInt8(truncatingIfNeeded: checksum >> 8), UInt8(truncatingIfNeeded: checksum)]
    }
    return frame
}

@Suite struct BLIPFrameCodecTests {
    static let flagCombinations: [BLIPFrameFlags] = {
        var result: [BLIPFrameFlags] = []
        for bits in 0..<16 {
            var flags: BLIPFrameFlags = []
            if bits & 1 != 0 { flags.insert(.compressed) }
            if bits & 2 != 0 { flags.insert(.urgent) }
            if bits & 4 != 0 { flags.insert(.noReply) }
            if bits & 8 != 0 { flags.insert(.moreComing) }
            result.append(flags)
        }
        return result
    }()

    @Test(arguments: [BLIPMessageType.request, .response, .error])
    func dataFramesRoundTripWithEveryFlagCombination(_ type: BLIPMessageType) throws {
        var encoder = BLIPFrameEncoder()
        var decoder = BLIPFrameDecoder()
        var number: UInt64 = 1
        for flags in Self.flagCombinations {
            for payload in [[UInt8](), [0], Array("hello hello hello".utf8), compressibleBytes(5000)] {
                var frameFlags = flags
                frameFlags.formUnion(BLIPFrameFlags(type: type))
                let bytes = encoder.encodeFrame(number: number, flags: frameFlags, data: payload[...])
                let frame = try decoder.decode(bytes)
                #expect(frame.number == number)
                #expect(frame.flags == frameFlags)
                #expect(frame.flags.type == type)
                #expect(frame.payload == payload)
                #expect(frame.wireSize == bytes.count - BLIPFrameEncoder.headerLength(number: number, flags: frameFlags))
                number = number &* 3 &+ 1
            }
        }
    }

    @Test func uncompressedFrameLayout() {
        var encoder = BLIPFrameEncoder()
        let bytes = encoder.encodeFrame(number: 300, flags: [.urgent], data: [1, 2, 3][...])
        let crc = referenceCRC32([1, 2, 3])
        #expect(bytes == rawFrame(number: 300, flags: 0x10, body: [1, 2, 3], checksum: crc))
    }

    @Test func checksumRunsAcrossFramesAndSkipsAcks() throws {
        var encoder = BLIPFrameEncoder()
        let first = encoder.encodeFrame(number: 1, flags: [], data: Array("abc".utf8)[...])
        _ = encoder.encodeAck(type: .ackRequest, number: 1, byteCount: 10)
        let second = encoder.encodeFrame(number: 2, flags: [.compressed], data: Array("defdefdef".utf8)[...])
        let expected = referenceCRC32(Array("abcdefdefdef".utf8))
        let trailer = second.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        #expect(trailer == expected)
        #expect(first.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) } == referenceCRC32(Array("abc".utf8)))
    }

    @Test func compressedFramesShrinkAndShareContext() throws {
        var encoder = BLIPFrameEncoder()
        var decoder = BLIPFrameDecoder()
        let text = compressibleBytes(8000)
        let first = encoder.encodeFrame(number: 1, flags: [.compressed], data: text[...])
        let second = encoder.encodeFrame(number: 2, flags: [.compressed], data: text[...])
        #expect(first.count < text.count / 2)
        #expect(second.count < first.count)  // the history window makes the repeat cheap
        #expect(try decoder.decode(first).payload == text)
        #expect(try decoder.decode(second).payload == text)
    }

    @Test func largeFramesRoundTrip() throws {
        // Frames far above the usual size inflate through several output buffers.
        var encoder = BLIPFrameEncoder(compressionLevel: 9)
        var decoder = BLIPFrameDecoder()
        var generator = SeededGenerator(seed: 8)
        for data in [compressibleBytes(1_000_000), generator.bytes(300_000), [UInt8](repeating: 0, count: 2_000_000)] {
            let bytes = encoder.encodeFrame(number: 1, flags: [.compressed], data: data[...])
            #expect(try decoder.decode(bytes).payload == data)
        }
    }

    @Test func ackFrames() throws {
        let encoder = BLIPFrameEncoder()
        var decoder = BLIPFrameDecoder()
        for (type, number, count) in [(BLIPMessageType.ackRequest, UInt64(7), UInt64(50_000)),
                                      (.ackResponse, 1, 0), (.ackRequest, UInt64.max, UInt64.max)]
        {
            let bytes = encoder.encodeAck(type: type, number: number, byteCount: count)
            let frame = try decoder.decode(bytes)
            #expect(frame.flags.type == type)
            #expect(frame.flags.contains([.urgent, .noReply]))
            #expect(frame.number == number)
            #expect(frame.ackByteCount == count)
        }
        // Trailing bytes after the count are ignored.
        let padded = rawFrame(number: 3, flags: 0x04, body: [0x05, 0xEE], checksum: nil)
        #expect(try decoder.decode(padded).ackByteCount == 5)
    }

    @Test func undefinedFlagBitsAreKept() throws {
        var decoder = BLIPFrameDecoder()
        let body: [UInt8] = [0]
        let frame = try decoder.decode(rawFrame(number: 1, flags: 0x80 | 0x01, body: body, checksum: referenceCRC32(body)))
        #expect(frame.flags.type == .response)
        #expect(frame.flags.rawValue == 0x81)
    }

    @Test(arguments: [UInt64(3), 6, 7])
    func undefinedTypesStillDecodeAndChecksum(_ type: UInt64) throws {
        var decoder = BLIPFrameDecoder()
        let body: [UInt8] = [1, 2]
        let frame = try decoder.decode(rawFrame(number: 1, flags: type, body: body, checksum: referenceCRC32(body)))
        #expect(frame.flags.type == nil)
        #expect(frame.flags.typeCode == UInt8(type))
        // The next frame's checksum includes the ignored frame's data.
        let next: [UInt8] = [3]
        #expect(throws: Never.self) {
            try decoder.decode(rawFrame(number: 1, flags: 0, body: next, checksum: referenceCRC32(body + next)))
        }
    }

    // MARK: - Fatal errors

    func expectFatal(_ bytes: [UInt8], _ fragment: String, decoder: inout BLIPFrameDecoder,
                     sourceLocation: SourceLocation = #_sourceLocation)
    {
        do {
            _ = try decoder.decode(bytes)
            Issue.record("expected a fatal error containing '\(fragment)'", sourceLocation: sourceLocation)
        } catch {
            #expect(error.isProtocolError, sourceLocation: sourceLocation)
            #expect(error.message.contains(fragment), "\(error.message)", sourceLocation: sourceLocation)
        }
    }

    @Test func malformedHeaders() {
        var decoder = BLIPFrameDecoder()
        expectFatal([], "empty frame", decoder: &decoder)
        decoder = BLIPFrameDecoder()
        expectFatal([0x01], "no flags", decoder: &decoder)
        decoder = BLIPFrameDecoder()
        expectFatal([0x81], "message number varint", decoder: &decoder)
        decoder = BLIPFrameDecoder()
        expectFatal([0x01, 0x80], "flags varint", decoder: &decoder)
        decoder = BLIPFrameDecoder()
        expectFatal([UInt8](repeating: 0xFF, count: 12), "message number varint", decoder: &decoder)
        decoder = BLIPFrameDecoder()
        expectFatal([0x01, 0x04], "byte count varint", decoder: &decoder)
        decoder = BLIPFrameDecoder()
        expectFatal([0x01, 0x05, 0x80], "byte count varint", decoder: &decoder)
        decoder = BLIPFrameDecoder()
        expectFatal([0x01, 0x00, 0x00, 0x00, 0x00], "too short for its checksum", decoder: &decoder)
    }

    @Test func checksumMismatchIsFatalAndLatches() {
        var decoder = BLIPFrameDecoder()
        let body: [UInt8] = [0, 1, 2]
        expectFatal(rawFrame(number: 1, flags: 0, body: body, checksum: referenceCRC32(body) ^ 1), "checksum mismatch",
                    decoder: &decoder)
        // Spent: even a good frame is refused now.
        expectFatal(rawFrame(number: 1, flags: 0, body: body, checksum: referenceCRC32(body)), "checksum mismatch",
                    decoder: &decoder)
    }

    @Test func checksumOfWrongHistoryIsFatal() throws {
        var encoder = BLIPFrameEncoder()
        let first = encoder.encodeFrame(number: 1, flags: [.moreComing], data: [1, 2, 3][...])
        let second = encoder.encodeFrame(number: 1, flags: [], data: [4][...])
        _ = first
        var decoder = BLIPFrameDecoder()
        expectFatal(second, "checksum mismatch", decoder: &decoder)  // first frame skipped
    }

    @Test func corruptedDeflateDataIsFatal() throws {
        var encoder = BLIPFrameEncoder()
        var bytes = encoder.encodeFrame(number: 1, flags: [.compressed], data: compressibleBytes(3000)[...])
        let header = BLIPFrameEncoder.headerLength(number: 1, flags: [.compressed])
        // Smash the start of the deflate data: invalid block type 3.
        bytes[header] = 0xFF
        bytes[header + 1] = 0xFF
        var decoder = BLIPFrameDecoder()
        expectFatal(bytes, "frame #1", decoder: &decoder)
    }

    @Test func deflateFinalBlockIsFatal() {
        // A final stored block holding "A": the stream ends, which BLIP never does.
        let body: [UInt8] = [0x01, 0x01, 0x00, 0xFE, 0xFF, 0x41]
        var decoder = BLIPFrameDecoder()
        expectFatal(rawFrame(number: 1, flags: 0x08, body: body, checksum: referenceCRC32([0x41])), "ends the stream",
                    decoder: &decoder)
    }

    @Test func deflateDataEndingMidBlockIsFatal() {
        // A stored block announcing 16 bytes but carrying 2.
        let body: [UInt8] = [0x00, 0x10, 0x00, 0xEF, 0xFF, 0x41, 0x42]
        var decoder = BLIPFrameDecoder()
        expectFatal(rawFrame(number: 1, flags: 0x08, body: body, checksum: 0), "block boundary", decoder: &decoder)
    }

    @Test func decompressionBombIsFatal() {
        var encoder = BLIPFrameEncoder()
        let zeros = [UInt8](repeating: 0, count: 1_000_000)
        let bytes = encoder.encodeFrame(number: 1, flags: [.compressed], data: zeros[...])
        #expect(bytes.count < 5000)
        var decoder = BLIPFrameDecoder(maxFrameOutput: 100_000)
        expectFatal(bytes, "inflates to more than", decoder: &decoder)
    }

    @Test func emptyCompressedBodyIsEmpty() throws {
        var decoder = BLIPFrameDecoder()
        let frame = try decoder.decode(rawFrame(number: 1, flags: 0x08, body: [], checksum: 0))
        #expect(frame.payload.isEmpty)
    }

    @Test func descriptionOfFlags() {
        #expect(BLIPFrameFlags(rawValue: 0x78).description == "MSG MUNZ")
        #expect(BLIPFrameFlags(rawValue: 0x03).description == "?3?")
    }
}
