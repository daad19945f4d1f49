// libFuzzer target: the `shoal/covered` report parser (scripts/fuzz coverage).
// Compiled together with Sources/DocumentModel, so it sees the module's internals.

/// Input: the `store` property, a newline, the `live` property (absent when the line is
/// `-`), a newline, then the JSON body. Properties: parsing never crashes. A report that
/// parses writes back (body and `live`) to one that parses equal; every range set in it
/// is sorted, disjoint and non-adjacent, within its limit, and its text parses back equal;
/// set algebra holds on it (a union with itself is itself, minus itself is empty, each
/// range's bounds are members). A small limit makes the dropping of the lowest ranges run.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCoverage(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let lines = bytes.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false)
    guard lines.count == 3 else { return 0 }
    let store = String(decoding: lines[0], as: UTF8.self)
    let liveLine = String(decoding: lines[1], as: UTF8.self)
    let live = liveLine == "-" ? nil : liveLine
    let limit = 1 + Int(count % 7)
    for limit in [limit, 65_536] {
        guard let report = CoverageReport(store: store, live: live, body: lines[2], limit: limit) else { continue }
        guard let again = CoverageReport(store: report.store, live: report.liveProperty, body: report.body, limit: limit),
              again == report
        else { fatalError("report round trip failed") }
        for (_, set) in report.ranges { check(set) }
    }
    // The bare text form, the whole input as one set.
    if let set = SequenceRanges(text: String(decoding: bytes, as: UTF8.self), limit: limit) { check(set) }
    return 0
}

private func check(_ set: SequenceRanges) {
    guard set.ranges.count <= set.limit else { fatalError("over the limit") }
    for (a, b) in zip(set.ranges, set.ranges.dropFirst()) where a.upperBound >= b.lowerBound || b.lowerBound - a.upperBound < 2 {
        fatalError("ranges overlap or touch: \(a) \(b)")
    }
    guard SequenceRanges(text: set.description, limit: set.limit) == set else { fatalError("text round trip failed") }
    var union = set
    union.formUnion(set)
    guard union == set else { fatalError("a union with itself changed the set") }
    guard set.subtracting(set).isEmpty else { fatalError("minus itself is not empty") }
    for range in set.ranges where !set.contains(range.lowerBound) || !set.contains(range.upperBound) {
        fatalError("a bound is not a member")
    }
}
