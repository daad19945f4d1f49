import DocumentModel
import Foundation

/// One operator applied to a field's value (`$gt: 5`, `$in: [...]`, `$elemMatch: {...}`).
public indirect enum MangoCondition: Sendable, Equatable {
    case eq(JSON), ne(JSON), gt(JSON), gte(JSON), lt(JSON), lte(JSON)
    case exists(Bool)
    case type(String)
    case `in`([JSON]), nin([JSON])
    case size(Int)
    case mod(divisor: Int64, remainder: Int64)
    case regex(String)
    case all([JSON])
    case elemMatch(MangoSelector), allMatch(MangoSelector)
    /// A combinator applied to the field (`{"f": {"$or": [{"$gt": 1}, ...]}}`) is parsed
    /// into selectors; `not` here is `{"f": {"$not": {"$gt": 1}}}`.
    case not(MangoCondition)

    static let typeNames: Set<String> = ["null", "boolean", "number", "string", "array", "object"]

    init(_ op: String, _ argument: JSON) throws(MangoError) {
        switch op {
        case "$eq": self = .eq(argument)
        case "$ne": self = .ne(argument)
        case "$gt": self = .gt(argument)
        case "$gte": self = .gte(argument)
        case "$lt": self = .lt(argument)
        case "$lte": self = .lte(argument)
        case "$exists":
            guard let flag = argument.boolValue else { throw .invalidSelector("$exists requires a boolean") }
            self = .exists(flag)
        case "$type":
            guard let name = argument.stringValue, Self.typeNames.contains(name) else {
                throw .invalidSelector("$type must be one of null, boolean, number, string, array, object")
            }
            self = .type(name)
        case "$in", "$nin", "$all":
            guard let values = argument.arrayValue else { throw .invalidSelector("\(op) requires an array") }
            self = op == "$in" ? .in(values) : op == "$nin" ? .nin(values) : .all(values)
        case "$size":
            guard let size = argument.intValue, size >= 0 else { throw .invalidSelector("$size requires a non-negative integer") }
            self = .size(Int(size))
        case "$mod":
            guard let pair = argument.arrayValue, pair.count == 2, let divisor = pair[0].intValue,
                  let remainder = pair[1].intValue, divisor != 0
            else { throw .invalidSelector("$mod requires [Divisor, Remainder] with a non-zero integer divisor") }
            self = .mod(divisor: divisor, remainder: remainder)
        case "$regex":
            guard let pattern = argument.stringValue, (try? NSRegularExpression(pattern: pattern)) != nil else {
                throw .invalidSelector("$regex requires a valid regular expression string")
            }
            self = .regex(pattern)
        case "$elemMatch", "$allMatch":
            guard argument.objectValue != nil else { throw .invalidSelector("\(op) requires a selector") }
            let selector = try MangoSelector(element: argument)
            self = op == "$elemMatch" ? .elemMatch(selector) : .allMatch(selector)
        case "$not":
            // {"f": {"$not": {"$gt": 1}}}: a condition on the same field.
            guard let object = argument.objectValue, object.count == 1, let inner = object.first, inner.key.hasPrefix("$") else {
                throw .invalidSelector("$not requires an operator object")
            }
            self = .not(try MangoCondition(inner.key, inner.value))
        default:
            throw .invalidOperator(op)
        }
    }

    /// Whether a document matching this condition must have the field.
    var requiresField: Bool {
        switch self {
        case .exists(let flag): flag
        case .ne, .nin, .not: false
        default: true
        }
    }

    /// Whether `value` (nil: the field is missing) satisfies the condition.
    public func matches(_ value: JSON?) -> Bool {
        guard let value else {
            switch self {
            case .exists(let flag): return !flag
            case .not(let inner): return !inner.matches(nil)
            default: return false
            }
        }
        switch self {
        case .eq(let argument): return compare(value, argument) == .orderedSame
        case .ne(let argument): return compare(value, argument) != .orderedSame
        case .gt(let argument): return compare(value, argument) == .orderedDescending
        case .gte(let argument): return compare(value, argument) != .orderedAscending
        case .lt(let argument): return compare(value, argument) == .orderedAscending
        case .lte(let argument): return compare(value, argument) != .orderedDescending
        case .exists(let flag): return flag
        case .type(let name): return Self.typeName(value) == name
        case .in(let arguments): return Self.inList(value, arguments)
        case .nin(let arguments): return !Self.inList(value, arguments)
        case .size(let size): return value.arrayValue?.count == size
        case .mod(let divisor, let remainder):
            guard case .int(let number) = value else { return false }
            return number % divisor == remainder
        case .regex(let pattern):
            guard let text = value.stringValue, let expression = try? NSRegularExpression(pattern: pattern) else { return false }
            return expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        case .all(let arguments):
            guard let elements = value.arrayValue else { return false }
            return arguments.allSatisfy { argument in elements.contains { compare($0, argument) == .orderedSame } }
        case .elemMatch(let selector):
            return value.arrayValue?.contains { selector.matches($0) } ?? false
        case .allMatch(let selector):
            guard let elements = value.arrayValue, !elements.isEmpty else { return false }
            return elements.allSatisfy { selector.matches($0) }
        case .not(let inner):
            return !inner.matches(value)
        }
    }

    private func compare(_ a: JSON, _ b: JSON) -> ComparisonResult { ViewCollation.compare(a, b) }

    /// `$in`: the value, or (for an array) any of its elements, equals an argument.
    static func inList(_ value: JSON, _ arguments: [JSON]) -> Bool {
        let candidates = [value] + (value.arrayValue ?? [])
        return arguments.contains { argument in
            candidates.contains { ViewCollation.compare($0, argument) == .orderedSame }
        }
    }

    static func typeName(_ value: JSON) -> String {
        switch value {
        case .null: "null"
        case .bool: "boolean"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension MangoSelector {
    /// Whether `document` (a JSON object with `_id` and `_rev`) matches.
    public func matches(_ document: JSON) -> Bool {
        switch self {
        case .field(let field, let condition): condition.matches(field.value(in: document))
        case .and(let parts): parts.allSatisfy { $0.matches(document) }
        case .or(let parts): parts.contains { $0.matches(document) }
        case .nor(let parts): !parts.contains { $0.matches(document) }
        case .not(let inner): !inner.matches(document)
        }
    }
}
