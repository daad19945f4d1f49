import Foundation
import Testing
import TestSupport

@testable import BLIP

/// The checked-in BLIP fuzz corpus (`Fuzz/corpus/blip`: seeds and every input the
/// libFuzzer target ever crashed on) replayed with the target's framing (2-byte
/// big-endian length before each frame), then truncated byte by byte and mutated with
/// a seeded generator. No input may crash; the seeds decode without a fatal error; a
/// decoder that failed stays failed.
@Suite(.ownThread) struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus/blip")

    /// Decodes a fuzz input; returns whether a fatal error occurred.
    static func decode(_ bytes: [UInt8]) -> Bool {
        var configuration = BLIPConfiguration()
        configuration.maxMessageSize = 1 << 20
        var decoder = BLIPMessageDecoder(configuration: configuration)
        for number in 1...3 { decoder.noteRequestSent(UInt64(number)) }
        var offset = 0
        var failed = false
        while offset < bytes.count {
            var length = Int(bytes[offset]) << 8
            if offset + 1 < bytes.count { length |= Int(bytes[offset + 1]) }
            offset += 2
            let end = min(bytes.count, offset + length)
            let frame = offset < end ? Array(bytes[offset..<end]) : []
            offset = end
            do {
                _ = try decoder.decode(frame)
                #expect(!failed, "a frame accepted after a fatal error")
            } catch {
                failed = true
            }
        }
        return failed
    }

    @Test func corpusDecodesAndMutationsNeverCrash() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).sorted()
        #expect(names.count >= 5)
        for (index, name) in names.enumerated() {
            let bytes = [UInt8](try Data(contentsOf: Self.corpus.appendingPathComponent(name)))
            // Seeds decode; inputs a fuzzer kept (`found-…`) and crash regressions need not.
            let seed = !name.hasPrefix("crash-") && !name.hasPrefix("found-")
            if seed { #expect(!Self.decode(bytes), "seed \(name) decodes") }
            for cut in 0..<bytes.count { _ = Self.decode(Array(bytes.prefix(cut))) }
            var rng = SplitMix64(seed: UInt64(index) + 7)
            for _ in 0..<(seed ? 300 : 20) {
                var mutated = bytes
                for _ in 0..<rng.int(1...4) where !mutated.isEmpty {
                    let position = rng.int(0...(mutated.count - 1))
                    switch rng.int(0...2) {
                    case 0: mutated[position] ^= UInt8(1 << rng.int(0...7))
                    case 1: mutated.insert(UInt8(truncatingIfNeeded: rng.next()), at: position)
                    default: mutated.remove(at: position)
                    }
                }
                _ = Self.decode(mutated)
            }
        }
    }
}
