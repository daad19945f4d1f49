// libFuzzer target: the JSON parser and the canonical writer (scripts/fuzz json).
// Compiled together with Sources/DocumentModel, so it sees the module's internals.

/// Properties: parsing never crashes; whatever parses has a canonical form that
/// parses back to an equal value, is its own canonical form, and (for an object)
/// has a revision digest body; `_revisions`-shaped values decode without crashing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    guard let value = try? JSON.parse(bytes) else { return 0 }
    let canonical = value.canonicalBytes()
    guard let again = try? JSON.parse(canonical) else { fatalError("canonical bytes do not parse: \(canonical)") }
    guard again == value else { fatalError("round trip changed the value") }
    guard again.canonicalBytes() == canonical else { fatalError("canonical form is not stable") }
    if case .object(let object) = value {
        _ = RevisionBody.digestBody(object)
        if let revisions = object["_revisions"] { _ = RevisionsJSON.decode(revisions) }
    }
    _ = RevisionsJSON.decode(value)
    return 0
}
