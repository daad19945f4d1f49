import Foundation
import Testing
import TestSupport

@testable import DocumentModel

/// The checked-in fuzz corpora (`Fuzz/corpus/json`, `revtree`, `versionvector`, `coverage`: seeds and
/// every input a fuzzer ever crashed on) replayed with the libFuzzer targets'
/// properties, then mutated with a seeded generator: whole, truncated byte by byte,
/// and with random byte flips, insertions and deletions. No input may crash; whatever
/// decodes must round-trip.
@Suite struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus")

    static func inputs(_ target: String) -> [(name: String, bytes: [UInt8])] {
        let folder = corpus.appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().compactMap { name in
            (try? Data(contentsOf: folder.appendingPathComponent(name))).map { (name, [UInt8]($0)) }
        }
    }

    /// A seed (`Fuzz/seeds.py`): a valid input that must decode. The rest are inputs a
    /// fuzzer kept (`found-…`, merged from long runs: they reach code the seeds do not)
    /// and every input that ever crashed a target (`crash-…`).
    static func isSeed(_ name: String) -> Bool {
        !name.hasPrefix("crash-") && !name.hasPrefix("found-")
    }

    /// The input, every prefix of it, and `count` seeded mutations of it.
    static func variants(_ bytes: [UInt8], seed: UInt64, count: Int = 300) -> [[UInt8]] {
        var out = (0...bytes.count).map { Array(bytes.prefix($0)) }
        var rng = SplitMix64(seed: seed)
        for _ in 0..<count {
            var mutated = bytes
            for _ in 0..<rng.int(1...4) {
                let position = mutated.isEmpty ? 0 : rng.int(0...(mutated.count - 1))
                switch rng.int(0...3) {
                case 0 where !mutated.isEmpty: mutated[position] ^= UInt8(1 << rng.int(0...7))
                case 1: mutated.insert(UInt8(truncatingIfNeeded: rng.next()), at: position)
                case 2 where !mutated.isEmpty: mutated.remove(at: position)
                default:
                    let interesting: [UInt8] = [0x00, 0x7F, 0x80, 0xFF, 0x22, 0x5C, 0x5B, 0x7B, 0x30, 0x2D]
                    if !mutated.isEmpty { mutated[position] = interesting[rng.int(0...(interesting.count - 1))] }
                }
            }
            out.append(mutated)
        }
        return out
    }

    /// The JSON target's property: what parses has a stable canonical form that parses back.
    static func checkJSON(_ bytes: [UInt8]) {
        guard let value = try? JSON.parse(bytes) else { return }
        let canonical = value.canonicalBytes()
        let again = try? JSON.parse(canonical)
        #expect(again == value, "round trip of \(bytes)")
        #expect(again?.canonicalBytes() == canonical)
        if case .object(let object) = value {
            _ = RevisionBody.digestBody(object)
            if let revisions = object["_revisions"] { _ = RevisionsJSON.decode(revisions) }
        }
    }

    /// The revision tree target's property: what decodes re-encodes to an equal tree.
    static func checkRevTree(_ bytes: [UInt8]) {
        guard let tree = try? RevTree(serialized: bytes) else { return }
        let decoded = try? RevTree(serialized: tree.serialized())
        #expect(decoded == tree, "round trip of \(bytes)")
        for leaf in tree.leaves { _ = tree.history(of: leaf) }
    }

    /// The version-vector target's property (Fuzz/VersionVector/FuzzEntry.swift): one or
    /// two vectors on two lines; what parses round-trips through every text form, and two
    /// vectors compare, merge and reconcile the same way from either side.
    static func checkVersionVector(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        var vectors = [VersionVector]()
        for part in text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false) {
            _ = try? Version(parsing: part)
            guard let (vector, legacy) = try? VersionVector.parseHistory(part) else { continue }
            for style in [VersionVector.TextStyle.couchbaseLite, .syncGateway] {
                let again = try? VersionVector.parseHistory(vector.text(style: style, legacy: legacy))
                #expect(again?.vector == vector && again?.legacy == legacy, "round trip of \(part)")
                let message = try? VersionVector.parseRevMessage(
                    rev: vector.current.description, history: vector.historyText(style: style, legacy: legacy))
                #expect(message?.vector == vector && message?.legacy == legacy, "rev message of \(part)")
            }
            #expect(vector.compare(to: vector) == .same)
            #expect(vector.pruned(keepingAtMost: 2).current == vector.current)
            vectors.append(vector)
        }
        guard vectors.count == 2 else { return }
        let (a, b) = (vectors[0], vectors[1])
        #expect(a.compare(to: b) == b.compare(to: a).reversed)
        let newest = VersionVector.joinedTimes([a, b]).values.max()!
        if newest < .max {
            let version = Version(time: newest + 1, source: SourceID(high: 0x5EED, low: 1))
            let ab = try? VersionVector.merged([a, b], as: version)
            #expect(ab != nil && ab == (try? VersionVector.merged([b, a], as: version)))
            #expect(ab?.compare(to: a) == .newer && ab?.compare(to: b) == .newer)
        }
        #expect((try? VersionVector.reconciling([a, b])) == (try? VersionVector.reconciling([b, a])))
    }

    /// The coverage target's property (Fuzz/Coverage/FuzzEntry.swift): `store`, `live`
    /// (`-` for none) and the body on three lines; a report that parses writes back to an
    /// equal one, and every range set in it keeps its invariants.
    static func checkCoverage(_ bytes: [UInt8]) {
        let lines = bytes.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false)
        guard lines.count == 3 else { return }
        let live = String(decoding: lines[1], as: UTF8.self)
        for limit in [1 + bytes.count % 7, 65_536] {
            guard let report = CoverageReport(
                store: String(decoding: lines[0], as: UTF8.self), live: live == "-" ? nil : live, body: lines[2], limit: limit)
            else { continue }
            #expect(CoverageReport(store: report.store, live: report.liveProperty, body: report.body, limit: limit) == report)
            for set in report.ranges.values {
                #expect(set.ranges.count <= limit)
                #expect(zip(set.ranges, set.ranges.dropFirst()).allSatisfy { $0.upperBound < $1.lowerBound && $1.lowerBound - $0.upperBound >= 2 })
                #expect(SequenceRanges(text: set.description, limit: limit) == set)
                #expect(set.subtracting(set).isEmpty)
            }
        }
    }

    @Test func coverageCorpus() {
        let inputs = Self.inputs("coverage")
        #expect(inputs.count >= 5)
        for (index, input) in inputs.enumerated() {
            let lines = input.bytes.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false)
            let live = lines.count == 3 ? String(decoding: lines[1], as: UTF8.self) : ""
            let parsed = lines.count == 3
                ? CoverageReport(store: String(decoding: lines[0], as: UTF8.self), live: live == "-" ? nil : live, body: lines[2])
                : nil
            #expect(parsed != nil || !Self.isSeed(input.name), "seed \(input.name) parses")
            for variant in Self.variants(input.bytes, seed: UInt64(index) + 300, count: Self.isSeed(input.name) ? 300 : 20) { Self.checkCoverage(variant) }
        }
    }

    @Test func versionVectorCorpus() {
        let inputs = Self.inputs("versionvector")
        #expect(inputs.count >= 5)
        for (index, input) in inputs.enumerated() {
            let first = String(decoding: input.bytes, as: UTF8.self).split(separator: "\n").first ?? ""
            #expect((try? VersionVector.parseHistory(first)) != nil || !Self.isSeed(input.name), "seed \(input.name) parses")
            for variant in Self.variants(input.bytes, seed: UInt64(index) + 200, count: Self.isSeed(input.name) ? 300 : 20) { Self.checkVersionVector(variant) }
        }
    }

    @Test func jsonCorpus() {
        let inputs = Self.inputs("json")
        #expect(inputs.count >= 5)
        for (index, input) in inputs.enumerated() {
            #expect((try? JSON.parse(input.bytes)) != nil || !Self.isSeed(input.name), "seed \(input.name) parses")
            for variant in Self.variants(input.bytes, seed: UInt64(index) + 1, count: Self.isSeed(input.name) ? 300 : 20) { Self.checkJSON(variant) }
        }
    }

    @Test func revTreeCorpus() {
        let inputs = Self.inputs("revtree")
        #expect(inputs.count >= 3)
        for (index, input) in inputs.enumerated() {
            #expect((try? RevTree(serialized: input.bytes)) != nil || !Self.isSeed(input.name), "seed \(input.name) decodes")
            for variant in Self.variants(input.bytes, seed: UInt64(index) + 100, count: Self.isSeed(input.name) ? 300 : 20) { Self.checkRevTree(variant) }
        }
    }
}
