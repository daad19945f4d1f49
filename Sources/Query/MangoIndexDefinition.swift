import DocumentModel
import Foundation

/// A Mango `json` index: the fields it is sorted by, an optional partial filter, its
/// name and design document. Stored, as CouchDB stores it, as a design document with
/// `"language": "query"` (so indexes replicate through the mesh like views):
/// `{"language":"query","views":{NAME:{"map":{"fields":{F:"asc"},
/// "partial_filter_selector":{…}},"reduce":"_count","options":{"def":{"fields":[F]}}}}}`.
public struct MangoIndexDefinition: Sendable, Equatable {
    public var ddoc: String
    public var name: String
    public var fields: [MangoField]
    public var partialFilter: JSON?

    /// Parses `POST /{db}/_index`'s body: `{"index": {"fields": [...],
    /// "partial_filter_selector": {...}}, "name": …, "ddoc": …, "type": "json"}`.
    public init(request body: [String: JSON]) throws(MangoError) {
        if let type = body["type"], type.stringValue != "json" {
            throw .badRequest("Only \"json\" indexes are supported (type: \(type.canonicalString))")
        }
        guard let index = body["index"]?.objectValue else {
            throw MangoError(status: 400, error: "missing_required_key", reason: "Missing required key: index")
        }
        guard let items = index["fields"]?.arrayValue, !items.isEmpty else {
            throw .badRequest("index.fields must be a non-empty array")
        }
        var fields: [MangoField] = []
        var directions: Set<String> = []
        for item in items {
            if let name = item.stringValue {
                fields.append(MangoField(dotted: name))
                directions.insert("asc")
            } else if let object = item.objectValue, object.count == 1, let (name, direction) = object.first,
                      let text = direction.stringValue, text == "asc" || text == "desc" {
                fields.append(MangoField(dotted: name))
                directions.insert(text)
            } else {
                throw .badRequest("index.fields items are field names or {\"field\": \"asc\"|\"desc\"}")
            }
        }
        guard directions.count == 1 else { throw .unsupportedMixedSort() }
        self.fields = fields
        if let filter = index["partial_filter_selector"] {
            _ = try MangoSelector(filter)
            partialFilter = filter
        }
        let signature = Self.signature(fields: fields, partialFilter: partialFilter)
        if let name = body["name"] {
            guard let text = name.stringValue, !text.isEmpty else { throw .badRequest("name must be a non-empty string") }
            self.name = text
        } else {
            self.name = signature
        }
        if let ddoc = body["ddoc"] {
            guard let text = ddoc.stringValue, !text.isEmpty else { throw .badRequest("ddoc must be a non-empty string") }
            self.ddoc = MangoQuery.designID(text)
        } else {
            self.ddoc = "_design/" + signature
        }
    }

    init(ddoc: String, name: String, fields: [MangoField], partialFilter: JSON?) {
        self.ddoc = ddoc
        self.name = name
        self.fields = fields
        self.partialFilter = partialFilter
    }

    /// A stable hash of what the index holds (its storage identity).
    public var signature: String { Self.signature(fields: fields, partialFilter: partialFilter) }

    static func signature(fields: [MangoField], partialFilter: JSON?) -> String {
        let text = JSON.array(fields.map { .string($0.description) }).canonicalString + (partialFilter?.canonicalString ?? "")
        return Digests.hex(SHA1.hash(Array(text.utf8)))
    }

    /// This index's entry in its design document's `views`.
    public var viewJSON: JSON {
        var map: [String: JSON] = ["fields": .object(Dictionary(uniqueKeysWithValues: fields.map { ($0.description, "asc") }))]
        if let partialFilter { map["partial_filter_selector"] = partialFilter }
        return [
            "map": .object(map), "reduce": "_count",
            "options": ["def": ["fields": .array(fields.map { .string($0.description) })]],
        ]
    }

    /// The indexes a design document defines (only `"language": "query"` ones).
    public static func all(inDesignDocument id: String, body: [String: JSON]) -> [MangoIndexDefinition] {
        guard body["language"]?.stringValue == "query", let views = body["views"]?.objectValue else { return [] }
        return views.keys.sorted().compactMap { name in
            guard let view = views[name]?.objectValue,
                  let names = view["options"]?["def"]?["fields"]?.arrayValue?.compactMap(\.stringValue), !names.isEmpty
            else { return nil }
            return MangoIndexDefinition(
                ddoc: id, name: name, fields: names.map(MangoField.init(dotted:)),
                partialFilter: view["map"]?["partial_filter_selector"])
        }
    }

    /// CouchDB's description of the index in `GET /{db}/_index`.
    public var listingJSON: JSON {
        var def: [String: JSON] = ["fields": .array(fields.map { [$0.description: "asc"] })]
        if let partialFilter { def["partial_filter_selector"] = partialFilter }
        return ["ddoc": .string(ddoc), "name": .string(name), "type": "json", "partitioned": false, "def": .object(def)]
    }
}
