import Testing

@testable import BLIP

@Suite struct BLIPMessageCodecTests {
    static func smallFrames(_ size: Int = 64) -> BLIPConfiguration {
        var configuration = BLIPConfiguration()
        configuration.maxFrameSize = size
        return configuration
    }

    func messages(_ events: [BLIPDecoderEvent]) -> [BLIPMessage] {
        events.compactMap { event in
            if case .message(_, _, let message) = event { return message }
            return nil
        }
    }

    @Test(arguments: [false, true])
    func bigMessageSplitsAndReassembles(compressed: Bool) throws {
        let configuration = Self.smallFrames(100)
        let message = BLIPMessage(profile: "rev", properties: [("id", "doc-1")], body: compressibleBytes(10_000),
                                  compressed: compressed)
        var encoder = BLIPMessageEncoder(configuration: configuration)
        let frames = encoder.encode(message, type: .request, number: 1)
        #expect(frames.count == (message.encodedData().count + 99) / 100)
        for frame in frames.dropLast() {
            #expect(frame[1] & 0x40 != 0)  // more-coming
        }
        #expect(frames.last.map { $0[1] & 0x40 } == 0)

        // One at a time.
        var decoder = BLIPMessageDecoder(configuration: configuration)
        var events: [BLIPDecoderEvent] = []
        for frame in frames {
            events.append(try decoder.decode(frame))
        }
        for event in events.dropLast() {
            switch event {
            case .partial, .shouldAcknowledge: break
            default: Issue.record("unexpected \(event)")
            }
        }
        #expect(events.last == .message(.request, number: 1, message))

        // All at once.
        var batch = BLIPMessageDecoder(configuration: configuration)
        let batchEvents = try batch.decode(contentsOf: frames)
        #expect(batchEvents == events)
        #expect(batch.incompleteMessageCount == 0)
    }

    @Test(arguments: [false, true])
    func propertiesSpanningSeveralFrames(compressed: Bool) throws {
        let configuration = Self.smallFrames(64)
        let properties = (0..<20).map { ("key-\($0)", String(repeating: "v", count: $0 * 3)) }
        let message = BLIPMessage(properties: properties, body: [1, 2, 3], compressed: compressed)
        var encoder = BLIPMessageEncoder(configuration: configuration)
        let frames = encoder.encode(message, type: .request, number: 1)
        #expect(frames.count > 5)
        var decoder = BLIPMessageDecoder(configuration: configuration)
        #expect(try decoder.decode(contentsOf: frames).last == .message(.request, number: 1, message))
    }

    @Test func propertiesLengthVarintSplitAcrossFrames() throws {
        // Frame 1 carries only the first byte of a two-byte properties length.
        var encoder = BLIPFrameEncoder()
        let message = BLIPMessage(properties: [("k", String(repeating: "x", count: 200))], body: [9])
        let data = message.encodedData()
        #expect(data[0] & 0x80 != 0)
        let first = encoder.encodeFrame(number: 1, flags: [.moreComing], data: data[0..<1])
        let second = encoder.encodeFrame(number: 1, flags: [], data: data[1...])
        var decoder = BLIPMessageDecoder()
        #expect(try decoder.decode(first) == .partial)
        #expect(try decoder.decode(second) == .message(.request, number: 1, message))
    }

    @Test func interleavedMessagesWithMixedCompression() throws {
        let configuration = Self.smallFrames(128)
        let one = BLIPMessage(profile: "a", body: compressibleBytes(3000, seed: 1), compressed: true)
        let two = BLIPMessage(profile: "b", body: compressibleBytes(2000, seed: 2), urgent: true)
        let reply = BLIPMessage(properties: [("ok", "1")], body: compressibleBytes(1500, seed: 3), compressed: true)
        var frameEncoder = BLIPFrameEncoder()
        let parts: [(BLIPMessage, BLIPMessageType, UInt64)] = [(one, .request, 1), (two, .request, 2), (reply, .response, 5)]
        var datas = parts.map { $0.0.encodedData()[...] }
        var stream: [[UInt8]] = []
        // Round-robin one frame each.
        while datas.contains(where: { !$0.isEmpty }) {
            for index in parts.indices where !datas[index].isEmpty {
                let chunk = datas[index].prefix(128)
                datas[index] = datas[index].dropFirst(chunk.count)
                var flags = parts[index].0.frameFlags(type: parts[index].1)
                if !datas[index].isEmpty { flags.insert(.moreComing) }
                stream.append(frameEncoder.encodeFrame(number: parts[index].2, flags: flags, data: chunk))
            }
        }
        var decoder = BLIPMessageDecoder(configuration: configuration)
        decoder.noteRequestSent(5)
        let events = try decoder.decode(contentsOf: stream)
        let completed = events.compactMap { event -> UInt64? in
            if case .message(_, let number, _) = event { return number }
            return nil
        }
        #expect(Set(completed) == [1, 2, 5])
        #expect(messages(events).contains(one))
        #expect(messages(events).contains(two))
        #expect(events.contains(.message(.response, number: 5, reply)))
    }

    @Test func acksAreDueEveryInterval() throws {
        var configuration = Self.smallFrames(1000)
        configuration.ackInterval = 5000
        let message = BLIPMessage(body: [UInt8](repeating: 7, count: 30_000))
        var encoder = BLIPMessageEncoder(configuration: configuration)
        let frames = encoder.encode(message, type: .request, number: 1)
        var decoder = BLIPMessageDecoder(configuration: configuration)
        var acks: [UInt64] = []
        var received: UInt64 = 0
        for frame in frames {
            received += UInt64(frame.count - 2)
            if case .shouldAcknowledge(let type, let number, let count) = try decoder.decode(frame) {
                #expect(type == .ackRequest)
                #expect(number == 1)
                #expect(count == received)
                acks.append(count)
            }
        }
        // 31 frames of 1004 wire bytes: an ACK after every 5th, none for the final frame.
        #expect(acks.count == 6)
    }

    @Test func errorRepliesDecode() throws {
        let error = BLIPError(domain: "HTTP", code: 404, message: "missing")
        var encoder = BLIPMessageEncoder()
        var decoder = BLIPMessageDecoder()
        decoder.noteRequestSent(1)
        let frames = encoder.encodeError(error, number: 1)
        guard case .message(.error, 1, let message) = try decoder.decode(contentsOf: frames).last else {
            Issue.record("no ERR message")
            return
        }
        #expect(BLIPError(errorReply: message) == error)
    }

    // MARK: - Numbering rules

    @Test func requestsMustBeginInSequence() throws {
        var decoder = BLIPMessageDecoder()
        let stream = frames(of: [(BLIPMessage(), .request, 1), (BLIPMessage(), .request, 3)])
        _ = try decoder.decode(stream[0])
        #expect { try decoder.decode(stream[1]) } throws: { ($0 as? BLIPError)?.message.contains("out of sequence") == true }
    }

    @Test func requestNumberZeroIsFatal() {
        var decoder = BLIPMessageDecoder()
        let stream = frames(of: [(BLIPMessage(), .request, 0)])
        #expect(throws: BLIPError.self) { try decoder.decode(stream[0]) }
    }

    @Test func frameForCompletedRequestIsIgnored() throws {
        var encoder = BLIPFrameEncoder()
        var decoder = BLIPMessageDecoder()
        let done = encoder.encodeFrame(number: 1, flags: [], data: [0][...])
        let late = encoder.encodeFrame(number: 1, flags: [], data: [0][...])
        let next = encoder.encodeFrame(number: 2, flags: [], data: [0][...])
        #expect(try decoder.decode(done) == .message(.request, number: 1, BLIPMessage()))
        guard case .ignoredFrame = try decoder.decode(late) else {
            Issue.record("expected an ignored frame")
            return
        }
        #expect(try decoder.decode(next) == .message(.request, number: 2, BLIPMessage()))
    }

    @Test func repliesNeedAnAnnouncedRequest() throws {
        var encoder = BLIPFrameEncoder()
        var decoder = BLIPMessageDecoder()
        decoder.noteRequestSent(1, expectsReply: false)
        decoder.noteRequestSent(2)
        let toNoReply = encoder.encodeFrame(number: 1, flags: BLIPFrameFlags(type: .response), data: [0][...])
        let good = encoder.encodeFrame(number: 2, flags: BLIPFrameFlags(type: .response), data: [0][...])
        let again = encoder.encodeFrame(number: 2, flags: BLIPFrameFlags(type: .response), data: [0][...])
        let never = encoder.encodeFrame(number: 9, flags: BLIPFrameFlags(type: .error), data: [0][...])
        guard case .ignoredFrame = try decoder.decode(toNoReply) else { Issue.record("not ignored"); return }
        #expect(try decoder.decode(good) == .message(.response, number: 2, BLIPMessage()))
        guard case .ignoredFrame = try decoder.decode(again) else { Issue.record("not ignored"); return }
        #expect { try decoder.decode(never) } throws: { ($0 as? BLIPError)?.message.contains("never sent") == true }
    }

    @Test func undefinedTypeFramesAreIgnored() throws {
        var encoder = BLIPFrameEncoder()
        var decoder = BLIPMessageDecoder()
        let odd = encoder.encodeFrame(number: 1, flags: BLIPFrameFlags(rawValue: 3), data: [0][...])
        let request = encoder.encodeFrame(number: 1, flags: [], data: [0][...])
        guard case .ignoredFrame = try decoder.decode(odd) else { Issue.record("not ignored"); return }
        #expect(try decoder.decode(request) == .message(.request, number: 1, BLIPMessage()))
    }

    @Test func acksAreReported() throws {
        var decoder = BLIPMessageDecoder()
        let ack = BLIPFrameEncoder().encodeAck(type: .ackResponse, number: 4, byteCount: 100_000)
        #expect(try decoder.decode(ack) == .acknowledged(.ackResponse, number: 4, byteCount: 100_000))
    }

    // MARK: - Malformed messages

    func decodeRaw(_ data: [UInt8], flags: BLIPFrameFlags = [], configuration: BLIPConfiguration = .init())
        throws(BLIPError) -> BLIPDecoderEvent
    {
        var encoder = BLIPFrameEncoder()
        var decoder = BLIPMessageDecoder(configuration: configuration)
        return try decoder.decode(encoder.encodeFrame(number: 1, flags: flags, data: data[...]))
    }

    @Test func malformedPropertiesAreFrameErrors() throws {
        let cases: [([UInt8], String)] = [
            ([3, UInt8(ascii: "a"), 0, UInt8(ascii: "b")], "NUL-terminated"),
            ([2, UInt8(ascii: "a"), 0], "odd"),
            ([4, 0xFE, 0, 0x41, 0], "UTF-8"),
            ([10, UInt8(ascii: "a"), 0], "longer than the message"),
        ]
        for (data, fragment) in cases {
            for flags: BLIPFrameFlags in [[], [.noReply]] {
                guard case .malformedMessage(.request, 1, let noReply, let error) = try decodeRaw(data, flags: flags)
                else {
                    Issue.record("expected a malformed message for \(data)")
                    continue
                }
                #expect(noReply == flags.contains(.noReply))
                #expect(error.code == 400)
                #expect(error.message.contains(fragment), "\(error.message)")
            }
        }
    }

    @Test func emptyMessageDataIsFatal() {
        for data: [UInt8] in [[], [0x80]] {
            #expect { try decodeRaw(data) } throws: {
                ($0 as? BLIPError)?.message.contains("before its properties length") == true
            }
        }
    }

    @Test func oversizeProperties() throws {
        var configuration = BLIPConfiguration()
        configuration.maxPropertiesSize = 1000
        let fits = BLIPMessage(properties: [("k", String(repeating: "v", count: 990))])
        #expect(throws: Never.self) { try decodeRaw(fits.encodedData(), configuration: configuration) }
        let big = BLIPMessage(properties: [("k", String(repeating: "v", count: 1000))])
        #expect { try decodeRaw(big.encodedData(), configuration: configuration) } throws: {
            ($0 as? BLIPError)?.message.contains("bytes of properties") == true
        }
        // Detected from the first frame, before the rest arrives.
        var encoder = BLIPFrameEncoder()
        var decoder = BLIPMessageDecoder()
        let first = encoder.encodeFrame(number: 1, flags: [.moreComing], data: BLIPVarint.encode(200_000)[...])
        #expect(throws: BLIPError.self) { try decoder.decode(first) }
        // A huge varint.
        #expect(throws: BLIPError.self) { try decodeRaw(BLIPVarint.encode(UInt64.max)) }
        #expect(throws: BLIPError.self) { try decodeRaw([UInt8](repeating: 0xFF, count: 11)) }
    }

    @Test func oversizeMessageIsFatal() {
        var configuration = Self.smallFrames(1000)
        configuration.maxMessageSize = 5000
        let message = BLIPMessage(body: [UInt8](repeating: 1, count: 6000))
        var encoder = BLIPMessageEncoder(configuration: configuration)
        var decoder = BLIPMessageDecoder(configuration: configuration)
        #expect { try decoder.decode(contentsOf: encoder.encode(message, type: .request, number: 1)) } throws: {
            ($0 as? BLIPError)?.message.contains("exceeds") == true
        }
    }

    @Test func fatalErrorsLatch() throws {
        var decoder = BLIPMessageDecoder()
        #expect(throws: BLIPError.self) { try decoder.decode([]) }
        let good = frames(of: [(BLIPMessage(), .request, 1)])
        #expect(throws: BLIPError.self) { try decoder.decode(good[0]) }
    }
}
