import DocumentModel

extension ViewQuery {
    /// Reads CouchDB's view parameters: `query` from a query string (JSON-valued ones as
    /// JSON text), then `body` (a POST body: `keys` and the same parameters as JSON
    /// values) over it. Unknown parameters are ignored, as CouchDB does. Throws
    /// `.queryParse` with CouchDB's messages.
    public static func parse(query: [String: String], body: [String: JSON] = [:]) throws(ViewError) -> ViewQuery {
        var parsed = ViewQuery()
        for name in query.keys.sorted() {
            try parsed.set(name, .text(query[name]!))
        }
        for name in body.keys.sorted() {
            try parsed.set(name, .json(body[name]!))
        }
        return parsed
    }

    /// A parameter's value: query-string text, or a JSON value from a body.
    enum Parameter {
        case text(String)
        case json(JSON)
    }

    mutating func set(_ name: String, _ value: Parameter) throws(ViewError) {
        switch name {
        case "key":
            let key = try Self.json(name, value)
            startKey = key
            endKey = key
        case "keys":
            guard case .array(let array) = try Self.json(name, value) else {
                throw .queryParse("`keys` member must be an array.")
            }
            keys = array
        case "startkey", "start_key": startKey = try Self.json(name, value)
        case "endkey", "end_key": endKey = try Self.json(name, value)
        case "startkey_docid", "start_key_doc_id": startKeyDocID = try Self.string(name, value)
        case "endkey_docid", "end_key_doc_id": endKeyDocID = try Self.string(name, value)
        case "inclusive_end": inclusiveEnd = try Self.bool(value)
        case "descending": descending = try Self.bool(value)
        case "limit": limit = try Self.positiveInt(value)
        case "skip": skip = try Self.positiveInt(value)
        case "include_docs": includeDocs = try Self.bool(value)
        case "conflicts": conflicts = try Self.bool(value)
        case "reduce": reduce = try Self.bool(value)
        case "group": grouping = try Self.bool(value) ? .exact : (grouping == .exact ? nil : grouping)
        case "group_level": grouping = .level(try Self.positiveInt(value))
        case "update_seq": updateSeq = try Self.bool(value)
        case "count": throw .queryParse("QS param `count` is not `limit`")
        case "update":
            switch try Self.string(name, value) {
            case "true": update = .true
            case "false": update = .false
            case "lazy": update = .lazy
            default: throw .queryParse("Invalid value for `update`.")
            }
        case "stale":
            switch try Self.string(name, value) {
            case "ok": update = .false
            case "update_after": update = .lazy
            default: throw .queryParse("Invalid value for `stale`.")
            }
        default:
            break
        }
    }

    private static func json(_ name: String, _ value: Parameter) throws(ViewError) -> JSON {
        switch value {
        case .json(let json): return json
        case .text(let text):
            guard let json = try? JSON.parse(text) else {
                throw .queryParse("Invalid JSON value for `\(name)`: \(text)")
            }
            return json
        }
    }

    private static func string(_ name: String, _ value: Parameter) throws(ViewError) -> String {
        switch value {
        case .text(let text): return text
        case .json(.string(let text)): return text
        case .json(.bool(let flag)): return flag ? "true" : "false"
        case .json(let other): throw .queryParse("Invalid value for `\(name)`: \(other.canonicalString)")
        }
    }

    private static func bool(_ value: Parameter) throws(ViewError) -> Bool {
        switch value {
        case .json(.bool(let flag)): return flag
        case .json(let other): throw .queryParse("Invalid boolean parameter: \(other.canonicalString)")
        case .text(let text):
            switch text.lowercased() {
            case "true": return true
            case "false": return false
            default: throw .queryParse("Invalid boolean parameter: \"\(text)\"")
            }
        }
    }

    private static func positiveInt(_ value: Parameter) throws(ViewError) -> Int {
        let number: Int
        let shown: String
        switch value {
        case .json(let json):
            shown = json.canonicalString
            guard let n = json.intValue, json.isNumber else { throw .queryParse("Invalid value for integer: \(shown)") }
            number = Int(clamping: n)
        case .text(let text):
            shown = "\"\(text)\""
            guard let n = Int(text) else { throw .queryParse("Invalid value for integer: \(shown)") }
            number = n
        }
        guard number >= 0 else { throw .queryParse("Invalid value for positive integer: \(shown)") }
        return number
    }
}
