// Literal conformances (for tests and code building bodies) and the textual description.

extension JSON: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self = .null }
}

extension JSON: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSON: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension JSON: ExpressibleByFloatLiteral {
    /// Normalized like `JSON.number(_:)`: `2.0` becomes `.int(2)`.
    public init(floatLiteral value: Double) { self = JSON.number(value) }
}

extension JSON: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSON: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
}

extension JSON: ExpressibleByDictionaryLiteral {
    /// Duplicate keys: the last one wins, as when parsing.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        var o = [String: JSON](minimumCapacity: elements.count)
        for (key, value) in elements { o[key] = value }
        self = .object(o)
    }
}

extension JSON: CustomStringConvertible {
    /// The canonical JSON text.
    public var description: String { canonicalString }
}
