// Public canonical-encoding entry points. The encoder itself is `CanonicalJSONWriter`.

extension JSON {
    /// The canonical JSON encoding (ARCHITECTURE.md §2): UTF-8, no whitespace,
    /// object keys sorted by their UTF-8 bytes, minimal string escapes, and
    /// numbers as described on `CanonicalJSONWriter`.
    public func canonicalBytes() -> [UInt8] {
        var writer = CanonicalJSONWriter()
        writer.write(self)
        return writer.bytes
    }

    /// Appends the canonical JSON encoding to `out`.
    public func encode(into out: inout [UInt8]) {
        var writer = CanonicalJSONWriter()
        writer.write(self)
        writer.appendBytes(to: &out)
    }

    /// The canonical JSON encoding as a string.
    public var canonicalString: String {
        String(decoding: canonicalBytes(), as: UTF8.self)
    }
}
