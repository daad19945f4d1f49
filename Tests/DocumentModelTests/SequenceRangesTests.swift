import Testing
import TestSupport

@testable import DocumentModel

/// `SequenceRanges` against a plain `Set` of the same sequences: random inserts of
/// numbers and ranges (in any order, overlapping, touching), membership, subtraction,
/// the text form's round trip, and the bound that may only forget.
@Suite struct SequenceRangesTests {
    static func randomRange(_ rng: inout SplitMix64, span: UInt64) -> ClosedRange<UInt64> {
        let first = UInt64(rng.int(0...Int(span)))
        let length = rng.int(0...3) == 0 ? UInt64(rng.int(0...12)) : 0
        return first...(first + length)
    }

    @Test func matchesASetOfSequences() {
        var rng = SplitMix64(seed: 46)
        for _ in 0..<300 {
            var ranges = SequenceRanges()
            var truth = Set<UInt64>()
            let span = UInt64(rng.int(5...200))
            for _ in 0..<rng.int(0...60) {
                let range = Self.randomRange(&rng, span: span)
                ranges.insert(range)
                truth.formUnion(range)
            }
            for value in 0...(span + 14) { #expect(ranges.contains(value) == truth.contains(value), "\(value) in \(ranges)") }
            #expect(ranges.count == UInt64(truth.count))
            // Sorted, disjoint and never adjacent (else two ranges would be one).
            for (left, right) in zip(ranges.ranges, ranges.ranges.dropFirst()) {
                #expect(left.upperBound + 1 < right.lowerBound, "\(ranges)")
            }
            // The text form names the same set.
            #expect(SequenceRanges(text: ranges.description) == ranges)
        }
    }

    @Test func insertionOrderDoesNotMatter() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<100 {
            let inserts = (0..<rng.int(1...40)).map { _ in Self.randomRange(&rng, span: 100) }
            var forward = SequenceRanges()
            var backward = SequenceRanges()
            for range in inserts { forward.insert(range) }
            for range in inserts.reversed() { backward.insert(range) }
            #expect(forward == backward)
        }
    }

    @Test func subtractingMatchesSetSubtraction() {
        var rng = SplitMix64(seed: 11)
        for _ in 0..<300 {
            var a = SequenceRanges()
            var b = SequenceRanges()
            var truthA = Set<UInt64>()
            var truthB = Set<UInt64>()
            for _ in 0..<rng.int(0...30) {
                let range = Self.randomRange(&rng, span: 80)
                a.insert(range)
                truthA.formUnion(range)
            }
            for _ in 0..<rng.int(0...30) {
                let range = Self.randomRange(&rng, span: 80)
                b.insert(range)
                truthB.formUnion(range)
            }
            let difference = a.subtracting(b)
            for value in UInt64(0)...100 {
                #expect(difference.contains(value) == (truthA.contains(value) && !truthB.contains(value)))
            }
            // Adding back what was subtracted gives the union.
            var union = difference
            union.formUnion(b)
            var expected = a
            expected.formUnion(b)
            #expect(union == expected)
        }
    }

    @Test func theBoundOnlyForgets() {
        var rng = SplitMix64(seed: 3)
        var ranges = SequenceRanges(limit: 8)
        var truth = Set<UInt64>()
        for _ in 0..<500 {
            let range = Self.randomRange(&rng, span: 1000)
            ranges.insert(range)
            truth.formUnion(range)
            #expect(ranges.ranges.count <= 8)
        }
        // Whatever it still claims is true.
        for value in 0...1100 where ranges.contains(UInt64(value)) { #expect(truth.contains(UInt64(value))) }
    }

    @Test func edgesOfTheNumberLine() {
        var ranges = SequenceRanges()
        ranges.insert(UInt64.max)
        ranges.insert(0)
        ranges.insert((UInt64.max - 2)...(UInt64.max - 1))
        #expect(ranges.ranges == [0...0, (UInt64.max - 2)...UInt64.max])
        #expect(SequenceRanges(text: ranges.description) == ranges)
        ranges.insert(0...UInt64.max)
        #expect(ranges.ranges == [0...UInt64.max])
    }

    @Test func malformedTextIsRefused() {
        for text in ["-", "1-", "-2", "3-2", "a", "1,,2", "1 ", " 1", "1-2-3", "+1", "123456789012345678901", "18446744073709551616"] {
            #expect(SequenceRanges(text: text) == nil, "\(text)")
        }
        #expect(SequenceRanges(text: "")?.isEmpty == true)
        #expect(SequenceRanges(text: "5,1-3,4")?.ranges == [1...5])
    }
}
