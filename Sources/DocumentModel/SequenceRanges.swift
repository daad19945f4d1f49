/// A set of sequence numbers kept as sorted, disjoint, non-adjacent closed ranges: what a
/// node holds of another store's changes feed (docs/architecture.md §10.10 "Offers as
/// knowledge"). A feed read in order fills long runs, so a few ranges stand for a whole
/// catch-up; gaps are the entries that never came (sent elsewhere, moved, refused).
///
/// Bounded: beyond `limit` ranges the lowest are dropped. Knowledge may only ever be lost,
/// never invented: a dropped range makes a peer offer more, never less.
///
/// Text form (`description`, `init(text:)`): ranges in ascending order, comma-separated,
/// each `first-last` or a lone number when `first == last` (`"1-200,205,207-300"`).
public struct SequenceRanges: Sendable, Equatable, CustomStringConvertible {
    /// The ranges, ascending; each at least two apart from the next.
    public private(set) var ranges: [ClosedRange<UInt64>] = []
    /// The most ranges kept (the lowest go first).
    public let limit: Int

    public init(limit: Int = 65_536) {
        self.limit = max(1, limit)
    }

    public init(_ ranges: [ClosedRange<UInt64>], limit: Int = 65_536) {
        self.init(limit: limit)
        for range in ranges { insert(range) }
    }

    public var isEmpty: Bool { ranges.isEmpty }

    /// How many sequences the set holds.
    public var count: UInt64 {
        ranges.reduce(0) { $0 &+ ($1.upperBound - $1.lowerBound &+ 1) }
    }

    /// The position of the first range whose upper bound is at least `value`.
    private func firstIndex(reaching value: UInt64) -> Int {
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    public func contains(_ value: UInt64) -> Bool {
        let index = firstIndex(reaching: value)
        return index < ranges.count && ranges[index].lowerBound <= value
    }

    public mutating func insert(_ value: UInt64) {
        insert(value...value)
    }

    /// Adds every sequence of `range`, merging it with the ranges it overlaps or touches.
    public mutating func insert(_ range: ClosedRange<UInt64>) {
        // The common case: the feed moved on by one entry.
        if let last = ranges.last, range.lowerBound > last.upperBound {
            if range.lowerBound == last.upperBound &+ 1 {
                ranges[ranges.count - 1] = last.lowerBound...range.upperBound
            } else {
                ranges.append(range)
                trim()
            }
            return
        }
        // Ranges that overlap or touch `range`: from the first reaching lowerBound - 1.
        let start = firstIndex(reaching: range.lowerBound == 0 ? 0 : range.lowerBound - 1)
        var end = start
        var merged = range
        while end < ranges.count, range.upperBound == .max || ranges[end].lowerBound <= range.upperBound + 1 {
            merged = min(merged.lowerBound, ranges[end].lowerBound)...max(merged.upperBound, ranges[end].upperBound)
            end += 1
        }
        ranges.replaceSubrange(start..<end, with: [merged])
        trim()
    }

    /// Adds every sequence of `other`.
    public mutating func formUnion(_ other: SequenceRanges) {
        for range in other.ranges { insert(range) }
    }

    /// The sequences of `self` that `other` does not hold.
    public func subtracting(_ other: SequenceRanges) -> SequenceRanges {
        var result = SequenceRanges(limit: limit)
        var index = 0
        for range in ranges {
            var low = range.lowerBound
            while index < other.ranges.count, other.ranges[index].upperBound < low { index += 1 }
            var cursor = index
            var done = false
            while cursor < other.ranges.count, other.ranges[cursor].lowerBound <= range.upperBound {
                let hole = other.ranges[cursor]
                if hole.lowerBound > low { result.ranges.append(low...(hole.lowerBound - 1)) }
                if hole.upperBound >= range.upperBound {
                    done = true
                    break
                }
                low = hole.upperBound + 1
                cursor += 1
            }
            if !done { result.ranges.append(low...range.upperBound) }
        }
        result.trim()
        return result
    }

    private mutating func trim() {
        if ranges.count > limit { ranges.removeFirst(ranges.count - limit) }
    }

    public var description: String {
        ranges.map { $0.lowerBound == $0.upperBound ? String($0.lowerBound) : "\($0.lowerBound)-\($0.upperBound)" }
            .joined(separator: ",")
    }

    /// Parses the text form. Ranges may come in any order and overlap; an empty text is
    /// the empty set. Nil for anything else (a malformed report is dropped, never guessed).
    public init?(text: some StringProtocol, limit: Int = 65_536) {
        self.init(limit: limit)
        guard !text.isEmpty else { return }
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = item.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard let first = Self.number(bounds[0]) else { return nil }
            let last: UInt64
            if bounds.count == 2 {
                guard let parsed = Self.number(bounds[1]), parsed >= first else { return nil }
                last = parsed
            } else {
                last = first
            }
            insert(first...last)
        }
    }

    /// A decimal number of 1–20 ASCII digits (no sign, no spaces).
    private static func number(_ text: some StringProtocol) -> UInt64? {
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(text)
    }
}
