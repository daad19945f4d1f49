import DocumentModel

/// A Mango selector (CouchDB's `_find` query language), parsed and normalized: implicit
/// `$and` of the top-level fields, implicit `$eq`, nested objects turned into dotted
/// field paths (`{"a": {"b": 1}}` is `a.b $eq 1`), as CouchDB normalizes them.
///
/// `MangoSelector` owns the meaning of every operator; matching a document is pure
/// (no I/O) and uses CouchDB's view collation (`ViewCollation`) for comparisons.
public indirect enum MangoSelector: Sendable, Equatable {
    /// A condition on one field.
    case field(MangoField, MangoCondition)
    case and([MangoSelector])
    case or([MangoSelector])
    case nor([MangoSelector])
    case not(MangoSelector)

    /// Matches every document (`{}`).
    public static let everything = MangoSelector.and([])

    /// Parses a selector object; throws `MangoError` (400) naming what is wrong.
    public init(_ json: JSON) throws(MangoError) {
        guard let object = json.objectValue else { throw .invalidSelector("selector must be a JSON object") }
        self = try Self.parse(object, prefix: [])
    }

    /// The selector of `$elemMatch` / `$allMatch`, applied to each array element:
    /// operators at its top level apply to the element itself (`{"$gt": 3}`).
    init(element json: JSON) throws(MangoError) {
        guard let object = json.objectValue else { throw .invalidSelector("$elemMatch requires a selector") }
        self = try Self.parse(object, prefix: [], element: true)
    }

    private static func parse(_ object: [String: JSON], prefix: [String], element: Bool = false) throws(MangoError) -> MangoSelector {
        var parts: [MangoSelector] = []
        for key in object.keys.sorted() {
            let value = object[key]!
            if key.hasPrefix("$") {
                if element, prefix.isEmpty, !["$and", "$or", "$nor", "$not"].contains(key) {
                    parts.append(.field(MangoField([]), try MangoCondition(key, value)))
                    continue
                }
                parts.append(try combinator(key, value, prefix: prefix))
            } else {
                let path = prefix + MangoField.split(key)
                parts.append(try fieldSelector(MangoField(path), value))
            }
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private static func combinator(_ op: String, _ value: JSON, prefix: [String]) throws(MangoError) -> MangoSelector {
        switch op {
        case "$and", "$or", "$nor":
            guard let items = value.arrayValue else { throw .invalidSelector("\(op) requires an array of selectors") }
            var parsed: [MangoSelector] = []
            for item in items {
                guard let object = item.objectValue else { throw .invalidSelector("\(op) requires an array of selectors") }
                parsed.append(try parse(object, prefix: prefix))
            }
            return op == "$and" ? .and(parsed) : op == "$or" ? .or(parsed) : .nor(parsed)
        case "$not":
            guard let object = value.objectValue else { throw .invalidSelector("$not requires a selector") }
            return .not(try parse(object, prefix: prefix))
        default:
            if !prefix.isEmpty {
                // An operator on a field reached through nesting: `{"a": {"$gt": 1}}`.
                return try fieldSelector(MangoField(prefix), .object([op: value]))
            }
            throw .invalidOperator(op)
        }
    }

    /// The selector of `field` for the value given it: an operator object, a nested
    /// object (dotted paths), or a value to be equal to.
    private static func fieldSelector(_ field: MangoField, _ value: JSON) throws(MangoError) -> MangoSelector {
        guard let object = value.objectValue, !object.isEmpty else { return .field(field, .eq(value)) }
        let operators = object.keys.filter { $0.hasPrefix("$") }
        if operators.isEmpty {
            // Nested fields: {"address": {"city": "Paris"}} → address.city $eq "Paris".
            return try parse(object, prefix: field.path)
        }
        guard operators.count == object.count else {
            throw .invalidSelector("cannot mix operators and fields in the condition of \(field)")
        }
        var parts: [MangoSelector] = []
        for op in object.keys.sorted() {
            let argument = object[op]!
            switch op {
            case "$and", "$or", "$nor", "$not":
                parts.append(try combinator(op, argument, prefix: field.path))
            default:
                parts.append(.field(field, try MangoCondition(op, argument)))
            }
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    /// Fields this selector requires to exist for a document to match (top-level `$and`
    /// conditions other than `$exists: false`): an index on them sees every match.
    public var requiredFields: Set<MangoField> {
        switch self {
        case .field(let field, let condition): condition.requiresField ? [field] : []
        case .and(let parts): parts.reduce(into: Set()) { $0.formUnion($1.requiredFields) }
        default: []
        }
    }

    /// The conditions on `field` that every match satisfies (top-level `$and` only).
    public func conditions(on field: MangoField) -> [MangoCondition] {
        switch self {
        case .field(let other, let condition): other == field ? [condition] : []
        case .and(let parts): parts.flatMap { $0.conditions(on: field) }
        default: []
        }
    }
}

/// A dotted field path (`address.city`; `a\.b` is one field named `a.b`).
public struct MangoField: Sendable, Hashable, CustomStringConvertible {
    public let path: [String]

    public init(_ path: [String]) { self.path = path }

    /// `"a.b"` → a path of two fields.
    public init(dotted: String) { path = Self.split(dotted) }

    static func split(_ text: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var escaped = false
        for character in text {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "." {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current)
        return parts
    }

    public var description: String {
        path.map { $0.replacingOccurrences(of: ".", with: "\\.") }.joined(separator: ".")
    }

    /// The value at this path in `document`, nil when a step is missing.
    public func value(in document: JSON) -> JSON? {
        var current = document
        for step in path {
            guard case .object(let object) = current, let next = object[step] else { return nil }
            current = next
        }
        return current
    }
}
