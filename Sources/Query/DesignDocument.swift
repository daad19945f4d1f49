import DocumentModel
import Foundation

/// A design document (`_design/{name}`) as views see it: its language and its views.
///
/// `DesignDocument` owns the reading and the checks of a design document's `views`
/// member (`{name: {map, reduce?}}`), independent of any storage: the REST layer checks a
/// body with `validate` before it is saved, and the view engine reads stored bodies with
/// `init(id:body:)`. Compiling the JavaScript is `ViewFunctions`' job.
public struct DesignDocument: Sendable, Equatable {
    /// The document ID, `_design/{name}`.
    public let id: String
    /// Views by name.
    public let views: [String: ViewDefinition]

    /// The name after `_design/`.
    public var name: String { String(id.dropFirst(Self.prefix.count)) }

    public static let prefix = "_design/"

    /// Whether `docID` names a design document.
    public static func isDesign(_ docID: String) -> Bool { docID.hasPrefix(prefix) }

    /// Reads the views of a stored body. Throws `ViewError.invalidDesign` for a body that
    /// `validate` would refuse (a stored one came through replication unchecked).
    public init(id: String, body: [String: JSON]) throws(ViewError) {
        self.id = id
        if let language = body["language"] {
            guard language.stringValue == "javascript" else {
                throw .invalidDesign("language must be \"javascript\" (got \(language.canonicalString))")
            }
        }
        var views: [String: ViewDefinition] = [:]
        if let member = body["views"] {
            guard let object = member.objectValue else { throw .invalidDesign("`views` is not an object") }
            for (name, value) in object {
                guard let view = value.objectValue else { throw .invalidDesign("View \(name) must be an object") }
                guard let map = view["map"]?.stringValue else {
                    throw .invalidDesign("View \(name) must have a string `map` function")
                }
                var reduce: String?
                if let reduceValue = view["reduce"], !reduceValue.isNull {
                    guard let text = reduceValue.stringValue else {
                        throw .invalidDesign("View \(name) has a non-string `reduce` function")
                    }
                    if text.hasPrefix("_"), ReduceFunction.Builtin(rawValue: text) == nil {
                        throw .invalidDesign("Unknown builtin reduce function: \(text)")
                    }
                    reduce = text
                }
                views[name] = ViewDefinition(map: map, reduce: reduce)
            }
        }
        self.views = views
    }

    /// Checks a design document before it is stored: its `views` are well formed and
    /// every map and JavaScript reduce function compiles (ES5). Throws
    /// `ViewError.invalidDesign` or `.compile` with the engine's message.
    public static func validate(id: String, body: [String: JSON]) throws(ViewError) {
        // Mango indexes are design documents too (`"language": "query"`, CouchDB's form):
        // they hold no JavaScript; `MangoIndexDefinition` reads them.
        if body["language"]?.stringValue == "query" {
            guard body["views"] == nil || body["views"]?.objectValue != nil else {
                throw .invalidDesign("`views` is not an object")
            }
            return
        }
        let design = try DesignDocument(id: id, body: body)
        for name in design.views.keys.sorted() {
            try ViewFunctions.compileCheck(design.views[name]!, viewName: name)
        }
    }
}

/// One view's functions.
public struct ViewDefinition: Sendable, Equatable, Hashable {
    public let map: String
    /// A JavaScript `function(keys, values, rereduce)` or a builtin (`_count`, `_sum`,
    /// `_stats`, `_approx_count_distinct`); nil for a map-only view.
    public let reduce: String?

    public init(map: String, reduce: String? = nil) {
        self.map = map
        self.reduce = reduce
    }

    /// The index's identity: SHA-1 of the functions. A changed function gets a new
    /// index (rebuilt from scratch); identical views share one.
    public var signature: String {
        var bytes = Array("javascript\u{0}".utf8) + Array(map.utf8)
        bytes.append(0)
        bytes += Array((reduce ?? "").utf8)
        return Digests.hex(SHA1.hash(bytes))
    }
}
