import DocumentModel
import DocumentStore

/// The answer of a view query, in CouchDB's two shapes.
///
/// `ViewResult` owns what a query returns before rendering: map rows with the index's
/// totals, or reduced rows. `json(renderDoc:)` gives CouchDB's JSON; a caller that
/// renders documents its own way (attachments, `_conflicts`) passes `renderDoc`.
public enum ViewResult: Sendable {
    /// `{"total_rows", "offset", "rows": [{"id", "key", "value", "doc"?}]}`.
    case rows(totalRows: Int, offset: Int, rows: [ViewRow], updateSeq: UInt64?)
    /// `{"rows": [{"key", "value"}]}`.
    case reduced(rows: [ReducedRow], updateSeq: UInt64?)

    public var updateSeq: UInt64? {
        switch self {
        case .rows(_, _, _, let seq), .reduced(_, let seq): return seq
        }
    }

    /// CouchDB's JSON. `renderDoc` turns an included document into its JSON (nil: the
    /// stored body with `_id` and `_rev`).
    public func json(renderDoc: ((DocumentListing) -> JSON)? = nil) -> JSON {
        var object: [String: JSON] = [:]
        switch self {
        case let .rows(total, offset, rows, _):
            object["total_rows"] = .int(Int64(total))
            object["offset"] = .int(Int64(offset))
            object["rows"] = .array(rows.map { $0.json(renderDoc: renderDoc ?? ViewRow.plainBody) })
        case .reduced(let rows, _):
            object["rows"] = .array(rows.map { ["key": $0.key, "value": $0.value] })
        }
        if let updateSeq { object["update_seq"] = .int(Int64(updateSeq)) }
        return .object(object)
    }
}

/// One row of a map query.
public struct ViewRow: Sendable {
    public let id: String
    public let key: JSON
    public let value: JSON
    /// With `include_docs`: the emitting document, or the one named by the value's `_id`
    /// (a linked document); `.some(nil)` when that document is missing, deleted or hidden.
    public var doc: DocumentListing??

    public func json(renderDoc: (DocumentListing) -> JSON) -> JSON {
        var object: [String: JSON] = ["id": .string(id), "key": key, "value": value]
        if let doc { object["doc"] = doc.map(renderDoc) ?? .null }
        return .object(object)
    }

    static func plainBody(_ listing: DocumentListing) -> JSON {
        var body = listing.body ?? [:]
        body["_id"] = .string(listing.docID)
        body["_rev"] = .string(listing.winner.description)
        return .object(body)
    }
}

/// One row of a reduce query.
public struct ReducedRow: Sendable, Equatable {
    public let key: JSON
    public let value: JSON

    public init(key: JSON, value: JSON) {
        self.key = key
        self.value = value
    }
}

/// Who reads a view on the public port: the rows of the documents whose channels pass
/// `canRead`. Reductions for such a reader are computed from visible rows only.
public struct ViewVisibility: Sendable {
    public let canRead: @Sendable (Set<String>) -> Bool

    public init(canRead: @escaping @Sendable (Set<String>) -> Bool) {
        self.canRead = canRead
    }
}
