/// The properties of a JSON object, held either parsed or as the canonical bytes they
/// arrived in; owns the choice, so that a receiver can store a canonical body as it is
/// and read single properties of it without building the whole object.
///
/// A replicated revision arrives as canonical JSON (Shoal sends stored bytes as they
/// are); building its `[String: JSON]` only to check it and encode it again was a good
/// part of a pull's cost. `ObjectBody(canonical:)` validates the bytes without building
/// values (`JSONParser.scanCanonicalObject`); `properties` parses them when asked.
public struct ObjectBody: Sendable {
    enum Storage: Sendable {
        case parsed([String: JSON])
        case canonical(bytes: [UInt8], members: [JSONParser.MemberRanges])
    }

    var storage: Storage

    /// Properties already parsed.
    public init(_ properties: [String: JSON]) {
        storage = .parsed(properties)
    }

    /// Bytes that are exactly the canonical JSON of an object whose keys are ASCII
    /// (`canonicalBytes()` of what they parse to), validated without building values;
    /// nil for anything else, which the caller parses instead.
    public init?(canonical bytes: [UInt8]) {
        guard let members = bytes.withUnsafeBufferPointer({ JSONParser.scanCanonicalObject($0) }) else { return nil }
        storage = .canonical(bytes: bytes, members: members)
    }

    /// The properties; parsed from the bytes on every call when held as bytes.
    public var properties: [String: JSON] {
        switch storage {
        case .parsed(let properties):
            return properties
        case .canonical(let bytes, _):
            // Validated when it was made: parsing cannot fail.
            return (try? JSON.parse(bytes))?.objectValue ?? [:]
        }
    }

    /// The canonical bytes, when the body is held as bytes.
    public var canonicalBytes: [UInt8]? {
        if case .canonical(let bytes, _) = storage { return bytes }
        return nil
    }

    /// Whether any top-level key starts with `_` (Couchbase metadata, reserved).
    public var hasUnderscoreKey: Bool {
        switch storage {
        case .parsed(let properties):
            return properties.keys.contains { $0.utf8.first == UInt8(ascii: "_") }
        case .canonical(let bytes, let members):
            return members.contains { bytes[$0.key.lowerBound] == UInt8(ascii: "_") }
        }
    }

    /// One top-level property; from bytes, only its value is parsed.
    public subscript(key: String) -> JSON? {
        switch storage {
        case .parsed(let properties):
            return properties[key]
        case .canonical(let bytes, let members):
            var key = key
            return key.withUTF8 { wanted in
                for member in members where member.key.count == wanted.count
                    && bytes[member.key].elementsEqual(wanted) {
                    return try? JSON.parse(bytes[member.value])
                }
                return nil
            }
        }
    }
}
