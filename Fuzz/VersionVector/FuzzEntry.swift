// libFuzzer target: the version-vector text parsers (scripts/fuzz versionvector).
// Compiled together with Sources/DocumentModel, so it sees the module's internals.

/// Properties: parsing never crashes. The input is one or two vectors separated by a
/// newline. Whatever parses re-formats, in both styles and as `rev`/`history`
/// properties, to text that parses back to an equal vector; it compares `.same` with
/// itself; pruning keeps its current version; two parsed vectors compare the same way
/// from both sides, merge to a vector newer than both in either order, and reconcile
/// to the same vector in either order.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVersionVector(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
    var vectors = [VersionVector]()
    for part in parts {
        _ = try? Version(parsing: part)
        guard let (vector, legacy) = try? VersionVector.parseHistory(part) else { continue }
        for style in [VersionVector.TextStyle.couchbaseLite, .syncGateway] {
            guard let again = try? VersionVector.parseHistory(vector.text(style: style, legacy: legacy)),
                  again.vector == vector, again.legacy == legacy
            else { fatalError("text round trip failed for \(part)") }
            guard let message = try? VersionVector.parseRevMessage(
                rev: vector.current.description, history: vector.historyText(style: style, legacy: legacy)),
                message.vector == vector, message.legacy == legacy
            else { fatalError("rev message round trip failed for \(part)") }
        }
        guard vector.compare(to: vector) == .same else { fatalError("not the same as itself: \(part)") }
        let pruned = vector.pruned(keepingAtMost: 2)
        guard pruned.current == vector.current, pruned.merges == vector.merges else { fatalError("pruning lost identity") }
        vectors.append(vector)
    }
    guard vectors.count == 2 else { return 0 }
    let (a, b) = (vectors[0], vectors[1])
    guard a.compare(to: b) == b.compare(to: a).reversed else { fatalError("comparison not antisymmetric") }
    let newest = VersionVector.joinedTimes([a, b]).values.max()!
    if newest < .max {
        let version = Version(time: newest + 1, source: SourceID(high: 0x5EED, low: 1))
        guard let ab = try? VersionVector.merged([a, b], as: version),
              let ba = try? VersionVector.merged([b, a], as: version), ab == ba,
              ab.compare(to: a) == .newer, ab.compare(to: b) == .newer
        else { fatalError("merge failed or depends on order") }
    }
    guard let r1 = try? VersionVector.reconciling([a, b]), let r2 = try? VersionVector.reconciling([b, a]), r1 == r2 else {
        fatalError("reconciling depends on order")
    }
    return 0
}
