// libFuzzer target: the revision tree deserializer (scripts/fuzz revtree).
// Compiled together with Sources/DocumentModel, so it sees the module's internals.

/// Properties: decoding never crashes; a decoded tree serializes to bytes that decode
/// to an equal tree, and its queries (leaves, winner, histories) do not crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRevTree(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    guard let tree = try? RevTree(serialized: bytes) else { return 0 }
    let again = tree.serialized()
    guard let decoded = try? RevTree(serialized: again) else { fatalError("serialized tree does not decode") }
    guard decoded == tree else { fatalError("round trip changed the tree") }
    for leaf in tree.leaves {
        _ = tree.history(of: leaf)
    }
    _ = tree.winner
    return 0
}
