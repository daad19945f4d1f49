import Testing
import TestSupport

@testable import BLIP

/// Random corruption of valid frame streams: the decoder must never crash or hang;
/// it either decodes or reports a `BLIPError`.
@Suite(.ownThread) struct FuzzTests {
    static let configuration: BLIPConfiguration = {
        var configuration = BLIPConfiguration()
        configuration.maxFrameSize = 96
        configuration.ackInterval = 300
        configuration.maxMessageSize = 1 << 20
        return configuration
    }()

    /// A valid stream: interleaved requests and replies, some compressed, with ACKs.
    static func validStream(seed: UInt64) -> (frames: [[UInt8]], messages: Int) {
        var generator = SeededGenerator(seed: seed)
        var encoder = BLIPFrameEncoder()
        var pending: [(number: UInt64, type: BLIPMessageType, flags: BLIPFrameFlags, data: ArraySlice<UInt8>)] = []
        for index in 0..<6 {
            let compressed = Bool.random(using: &generator)
            let body = index % 2 == 0
                ? compressibleBytes(Int.random(in: 0...700, using: &generator), seed: seed &+ UInt64(index))
                : generator.bytes(Int.random(in: 0...300, using: &generator))
            let message = BLIPMessage(profile: "p\(index)", properties: [("ü", "✓"), ("n", "\(index)")], body: body,
                                      urgent: Bool.random(using: &generator), compressed: compressed)
            let type: BLIPMessageType = index < 4 ? .request : (index == 4 ? .response : .error)
            let number = index < 4 ? UInt64(index + 1) : UInt64(index - 3)
            pending.append((number, type, message.frameFlags(type: type), message.encodedData()[...]))
        }
        var frames: [[UInt8]] = []
        while !pending.isEmpty {
            let pick = Int.random(in: 0..<pending.count, using: &generator)
            // Requests must begin in order: only start request n after n-1 started.
            let index = pending.firstIndex { $0.type == .request } == pick || pending[pick].type != .request
                ? pick : (pending.firstIndex { $0.type == .request } ?? pick)
            var item = pending[index]
            let chunk = item.data.prefix(96)
            item.data = item.data.dropFirst(chunk.count)
            var flags = item.flags
            if !item.data.isEmpty { flags.insert(.moreComing) }
            frames.append(encoder.encodeFrame(number: item.number, flags: flags, data: chunk))
            if Int.random(in: 0..<5, using: &generator) == 0 {
                frames.append(encoder.encodeAck(type: .ackRequest, number: 1, byteCount: UInt64(frames.count * 50)))
            }
            if item.data.isEmpty {
                pending.remove(at: index)
            } else {
                pending[index] = item
            }
        }
        return (frames, 6)
    }

    static func decoder() -> BLIPMessageDecoder {
        var decoder = BLIPMessageDecoder(configuration: configuration)
        decoder.noteRequestSent(1)
        decoder.noteRequestSent(2)
        decoder.noteRequestSent(3, expectsReply: false)
        return decoder
    }

    /// Feeds a stream; returns (completed messages, error if any).
    static func feed(_ frames: [[UInt8]]) -> (Int, BLIPError?) {
        var decoder = decoder()
        var completed = 0
        for frame in frames {
            do {
                if case .message = try decoder.decode(frame) { completed += 1 }
            } catch {
                return (completed, error)
            }
        }
        return (completed, nil)
    }

    @Test func validStreamsDecodeCompletely() {
        for seed in 1...50 {
            let (frames, count) = Self.validStream(seed: UInt64(seed))
            let (completed, error) = Self.feed(frames)
            #expect(error == nil, "seed \(seed): \(String(describing: error))")
            #expect(completed == count, "seed \(seed)")
        }
    }

    @Test func randomMutationsNeverCrash() {
        var generator = SeededGenerator(seed: 0x5EED)
        var outcomes = [String: Int]()
        for round in 0..<3000 {
            var (frames, _) = Self.validStream(seed: UInt64(round % 40 + 1))
            let mutations = Int.random(in: 1...3, using: &generator)
            for _ in 0..<mutations {
                guard !frames.isEmpty else { break }
                let target = Int.random(in: 0..<frames.count, using: &generator)
                switch Int.random(in: 0..<8, using: &generator) {
                case 0:  // flip one bit
                    if !frames[target].isEmpty {
                        let offset = Int.random(in: 0..<frames[target].count, using: &generator)
                        frames[target][offset] ^= 1 << UInt8.random(in: 0...7, using: &generator)
                    }
                case 1:  // randomize one byte
                    if !frames[target].isEmpty {
                        let offset = Int.random(in: 0..<frames[target].count, using: &generator)
                        frames[target][offset] = UInt8.random(in: 0...255, using: &generator)
                    }
                case 2:  // truncate
                    frames[target] = Array(frames[target].prefix(Int.random(in: 0...frames[target].count, using: &generator)))
                case 3:  // drop a frame
                    frames.remove(at: target)
                case 4:  // duplicate a frame
                    frames.insert(frames[target], at: target)
                case 5:  // swap two frames (reordering is illegal)
                    let other = Int.random(in: 0..<frames.count, using: &generator)
                    frames.swapAt(target, other)
                case 6:  // insert random bytes
                    let offset = Int.random(in: 0...frames[target].count, using: &generator)
                    frames[target].insert(contentsOf: generator.bytes(Int.random(in: 1...8, using: &generator)), at: offset)
                default:  // replace by garbage
                    frames[target] = generator.bytes(Int.random(in: 0...64, using: &generator))
                }
            }
            let (_, error) = Self.feed(frames)
            let key = error.map { String($0.message.prefix(40)) } ?? "decoded"
            outcomes[key, default: 0] += 1
            if let error {
                #expect(error.isProtocolError, "\(error)")
            }
        }
        #expect(outcomes.values.reduce(0, +) == 3000)
        #expect(outcomes.count > 5)  // many different failure modes were exercised
    }

    @Test func garbageFramesNeverCrash() {
        var generator = SeededGenerator(seed: 77)
        for _ in 0..<3000 {
            var decoder = Self.decoder()
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                var frame = generator.bytes(Int.random(in: 0...40, using: &generator))
                if !frame.isEmpty && Bool.random(using: &generator) {
                    frame[0] = UInt8.random(in: 0...4, using: &generator)  // plausible message numbers
                }
                if frame.count > 1 && Bool.random(using: &generator) {
                    frame[1] = UInt8.random(in: 0...0x7F, using: &generator)  // plausible flags
                }
                do {
                    _ = try decoder.decode(frame)
                } catch {
                    break
                }
            }
        }
    }

    @Test func randomPropertyBytesNeverCrash() {
        var generator = SeededGenerator(seed: 99)
        for _ in 0..<5000 {
            var bytes = generator.bytes(Int.random(in: 0...24, using: &generator))
            for index in bytes.indices where Int.random(in: 0..<4, using: &generator) == 0 {
                bytes[index] = 0
            }
            switch BLIPMessage.decodeProperties(bytes[...]) {
            case .success(let pairs):
                // Valid input round-trips exactly.
                let data = BLIPMessage(properties: pairs).encodedData()
                #expect(Array(data.dropFirst(BLIPVarint.encodedLength(UInt64(bytes.count)))) == bytes)
            case .failure(let error):
                #expect(error.code == 400)
            }
        }
    }

    @Test func randomVarintBytesNeverCrash() {
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<5000 {
            let bytes = generator.bytes(Int.random(in: 0...12, using: &generator))
            if let (value, length) = try? BLIPVarint.decode(bytes) {
                #expect(length <= 10)
                #expect(length <= bytes.count)
                _ = value
            }
        }
    }
}
