import DocumentModel
import Foundation

/// A parsed `_find` request body: selector, projection, sort, paging, index hint.
public struct MangoQuery: Sendable, Equatable {
    public var selector: MangoSelector
    /// The selector as given (echoed by `_explain`).
    public var selectorJSON: JSON
    /// Projection; nil returns whole documents.
    public var fields: [MangoField]?
    /// Sort fields, all in one direction (CouchDB's rule).
    public var sort: [MangoField] = []
    public var descending = false
    public var limit = 25
    public var skip = 0
    /// `use_index`: a design document name, or `[ddoc, name]`.
    public var useIndex: (ddoc: String, name: String?)?
    public var executionStats = false
    public var conflicts = false
    /// Opaque continuation from the previous page.
    public var bookmark: String?

    public static func == (a: MangoQuery, b: MangoQuery) -> Bool {
        a.selector == b.selector && a.fields == b.fields && a.sort == b.sort && a.descending == b.descending
            && a.limit == b.limit && a.skip == b.skip && a.useIndex?.ddoc == b.useIndex?.ddoc
            && a.useIndex?.name == b.useIndex?.name && a.bookmark == b.bookmark
    }

    public init(_ body: [String: JSON]) throws(MangoError) {
        guard let selector = body["selector"] else {
            throw MangoError(status: 400, error: "missing_required_key", reason: "Missing required key: selector")
        }
        selectorJSON = selector
        self.selector = try MangoSelector(selector)
        if let fields = body["fields"] {
            guard let names = fields.arrayValue?.compactMap(\.stringValue), names.count == fields.arrayValue?.count else {
                throw .badRequest("fields must be an array of field names")
            }
            self.fields = names.map(MangoField.init(dotted:))
        }
        if let sort = body["sort"] {
            guard let items = sort.arrayValue else { throw .badRequest("sort must be an array") }
            var directions: Set<String> = []
            for item in items {
                if let name = item.stringValue {
                    self.sort.append(MangoField(dotted: name))
                    directions.insert("asc")
                } else if let object = item.objectValue, object.count == 1, let (name, direction) = object.first,
                          let text = direction.stringValue, text == "asc" || text == "desc" {
                    self.sort.append(MangoField(dotted: name))
                    directions.insert(text)
                } else {
                    throw .badRequest("Invalid sort: each item is a field name or {\"field\": \"asc\"|\"desc\"}")
                }
            }
            guard directions.count <= 1 else { throw .unsupportedMixedSort() }
            descending = directions.first == "desc"
        }
        if let limit = body["limit"] {
            guard let value = limit.intValue, value >= 0 else { throw .badRequest("limit must be a non-negative integer") }
            self.limit = Int(min(value, Int64(Int32.max)))
        }
        if let skip = body["skip"] {
            guard let value = skip.intValue, value >= 0 else { throw .badRequest("skip must be a non-negative integer") }
            self.skip = Int(min(value, Int64(Int32.max)))
        }
        if let index = body["use_index"] {
            if let name = index.stringValue {
                useIndex = (Self.designID(name), nil)
            } else if let pair = index.arrayValue?.compactMap(\.stringValue), (1...2).contains(pair.count) {
                useIndex = (Self.designID(pair[0]), pair.count == 2 ? pair[1] : nil)
            } else {
                throw .badRequest("use_index must be a design document name or [ddoc, name]")
            }
        }
        executionStats = body["execution_stats"]?.boolValue ?? false
        conflicts = body["conflicts"]?.boolValue ?? false
        if let bookmark = body["bookmark"], !bookmark.isNull {
            guard let text = bookmark.stringValue else { throw .badRequest("bookmark must be a string") }
            self.bookmark = text == "nil" ? nil : text
        }
    }

    /// `_design/name` for `name` or `_design/name`.
    static func designID(_ name: String) -> String {
        name.hasPrefix("_design/") ? name : "_design/" + name
    }

    /// The document trimmed to `fields` (nested paths kept nested), or whole.
    public func project(_ document: [String: JSON]) -> [String: JSON] {
        guard let fields else { return document }
        var out: [String: JSON] = [:]
        for field in fields {
            guard let value = field.value(in: .object(document)) else { continue }
            Self.set(value, at: field.path[...], in: &out)
        }
        return out
    }

    private static func set(_ value: JSON, at path: ArraySlice<String>, in object: inout [String: JSON]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            object[first] = value
            return
        }
        var inner = object[first]?.objectValue ?? [:]
        set(value, at: path.dropFirst(), in: &inner)
        object[first] = .object(inner)
    }
}
