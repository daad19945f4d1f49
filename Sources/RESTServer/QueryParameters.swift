import DocumentModel
import Foundation

/// A request's query string, percent-decoded, with CouchDB's conventions for
/// booleans, integers and JSON-valued parameters.
struct QueryParameters: Sendable {
    private var values: [String: String] = [:]

    init(_ query: String?) {
        guard let query, !query.isEmpty else { return }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = Self.decode(parts[0])
            let value = parts.count > 1 ? Self.decode(parts[1]) : ""
            values[key] = value
        }
    }

    init(_ values: [String: String]) {
        self.values = values
    }

    private static func decode(_ text: Substring) -> String {
        let spaced = text.contains("+") ? text.replacingOccurrences(of: "+", with: " ") : String(text)
        return PercentDecoding.decode(spaced) ?? spaced
    }

    subscript(_ key: String) -> String? { values[key] }

    /// Every parameter, decoded (for parsers that take them all, e.g. view queries).
    var all: [String: String] { values }

    /// Replaces values with those of `other` where it has them.
    mutating func overlay(_ other: QueryParameters) {
        values.merge(other.values) { _, new in new }
    }

    func bool(_ key: String, default defaultValue: Bool = false) throws(HTTPFailure) -> Bool {
        guard let value = values[key] else { return defaultValue }
        switch value.lowercased() {
        case "true", "1", "": return true
        case "false", "0": return false
        default: throw .badRequest("Invalid boolean value for \(key): \(value)")
        }
    }

    func int(_ key: String) throws(HTTPFailure) -> Int? {
        guard let value = values[key] else { return nil }
        guard let number = Int(value), number >= 0 else {
            throw .badRequest("Invalid value for \(key): expected a non-negative integer")
        }
        return number
    }

    /// A JSON-valued parameter (`startkey="a"`, `open_revs=["1-a"]`); a value that is
    /// not JSON is taken as a plain string, as Sync Gateway does.
    func json(_ key: String) -> JSON? {
        guard let value = values[key] else { return nil }
        return (try? JSON.parse(value)) ?? .string(value)
    }

    /// A list of strings given as a JSON array or comma-separated.
    func stringList(_ key: String) throws(HTTPFailure) -> [String]? {
        guard let value = values[key] else { return nil }
        if value.hasPrefix("[") {
            guard let array = (try? JSON.parse(value))?.arrayValue else {
                throw .badRequest("Invalid JSON array for \(key)")
            }
            return try array.map { (item: JSON) throws(HTTPFailure) -> String in
                guard let string = item.stringValue else { throw .badRequest("Invalid value in \(key)") }
                return string
            }
        }
        return value.split(separator: ",").map(String.init)
    }
}
