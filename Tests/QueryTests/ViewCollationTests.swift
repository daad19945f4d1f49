import DocumentModel
import Foundation
import Query
import Testing

/// CouchDB's documented collation order ("Views Collation"), as a table: every value
/// sorts strictly before the next. Objects differ from CouchDB in one documented way:
/// members compare in Shoal's canonical key order, not in the order they were written.
@Suite struct ViewCollationTests {
    static let ordered: [JSON] = [
        .null,
        false,
        true,
        // numbers
        -1e300, -2, -1.5, 0, 1, 2, 3.5, 4, 1e300,
        // text: case and accents after the base letter, lower case first
        "a", "A", "á", "Á", "aa", "b", "B", "ba", "bb",
        // arrays: element-wise, shorter first
        ["a"], ["b"], ["b", "c"], ["b", "c", "a"], ["b", "d"], ["b", "d", "e"],
        // objects: member by member, fewer members first on a tie
        ["a": 1], ["a": 2], ["a": 2, "c": 1], ["b": 1], ["b": 2], ["b": 2, "c": 2],
    ]

    @Test func documentedOrderIsStrictlyIncreasing() {
        for (index, value) in Self.ordered.enumerated() {
            for (other, later) in Self.ordered.enumerated() {
                let expected: ComparisonResult = index < other ? .orderedAscending : (index == other ? .orderedSame : .orderedDescending)
                #expect(ViewCollation.compare(value, later) == expected, "\(value) vs \(later)")
            }
        }
    }

    @Test func sortingAShuffledTableRestoresIt() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            let shuffled = Self.ordered.shuffled(using: &generator)
            #expect(shuffled.sorted(by: ViewCollation.less) == Self.ordered)
        }
    }

    @Test(arguments: [
        (JSON.int(1), JSON.double(1.0)),
        (JSON.array([1, "x"]), JSON.array([.double(1.0), "x"])),
        (JSON.double(-0.0), JSON.int(0)),
    ])
    func equalValuesHaveEqualSortKeys(_ a: JSON, _ b: JSON) {
        #expect(ViewCollation.compare(a, b) == .orderedSame)
        #expect(ViewCollation.sortKey(a) == ViewCollation.sortKey(b))
    }

    @Test func typeOrderHoldsInsideArrays() {
        let values: [JSON] = [[.null], [false], [true], [0], [""], [[]], [[:]]]
        #expect(values.sorted(by: ViewCollation.less) == values)
        #expect(ViewCollation.less([], [.null]))
        #expect(ViewCollation.less(["a", "b"], ["a", "b", .null]))
    }

    @Test func stringsAreNotInByteOrder() {
        // Byte order would put "B" before "a" and "é" after "z".
        #expect(ViewCollation.less("a", "B"))
        #expect(ViewCollation.less("é", "z"))
        #expect(ViewCollation.less("e", "é"))
        #expect(ViewCollation.less("é", "f"))
        // Prefixes first, and a NUL inside a string does not end it early.
        #expect(ViewCollation.less("ab", "abc"))
        #expect(ViewCollation.less("a", "a\u{0}"))
        #expect(ViewCollation.less("a\u{0}", "a\u{1}"))
        // Canonically equivalent strings collate equal.
        #expect(ViewCollation.compare("\u{e9}", "e\u{301}") == .orderedSame)
    }

    @Test func sortKeysAreByteOrdered() {
        let keys = Self.ordered.map(ViewCollation.sortKey)
        for pair in zip(keys, keys.dropFirst()) {
            #expect(pair.0.lexicographicallyPrecedes(pair.1))
        }
    }
}
