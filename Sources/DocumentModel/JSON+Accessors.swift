// Typed accessors and subscripts for reading `JSON` values.

extension JSON {
    /// The member named `key` if this is an object that has it, else nil.
    public subscript(key: String) -> JSON? {
        guard case .object(let o) = self else { return nil }
        return o[key]
    }

    /// The element at `index` if this is an array and the index is in range, else nil.
    public subscript(index: Int) -> JSON? {
        guard case .array(let a) = self, a.indices.contains(index) else { return nil }
        return a[index]
    }

    /// The members if this is an object.
    public var objectValue: [String: JSON]? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The elements if this is an array.
    public var arrayValue: [JSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The string if this is a string.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer if this is an `.int`, or a `.double` holding an integral value within `Int64`'s range.
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d): return JSON.exactInt64(d)
        default: return nil
        }
    }

    /// The number as a `Double` if this is a number (`.int` values may round).
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The Boolean if this is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Whether this is a number (`.int` or `.double`).
    public var isNumber: Bool {
        switch self {
        case .int, .double: return true
        default: return false
        }
    }
}
