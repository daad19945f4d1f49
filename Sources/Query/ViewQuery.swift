import DocumentModel

/// The options of one view query (`GET|POST /{db}/_design/{ddoc}/_view/{view}`).
///
/// `ViewQuery` owns the meaning of CouchDB's view parameters once parsed
/// (`ViewQuery+Parsing` reads them from a query string or a JSON body) and their
/// cross-checks against the view (`validate(reduces:)`), with CouchDB's messages.
public struct ViewQuery: Sendable, Equatable {
    /// When the index is brought up to date.
    public enum Update: String, Sendable {
        /// Before answering (default).
        case `true`
        /// Never: answer from the index as it is (`stale=ok`).
        case `false`
        /// After answering, in the background (`stale=update_after`).
        case lazy
    }

    public var keys: [JSON]?
    public var startKey: JSON?
    public var endKey: JSON?
    public var startKeyDocID: String?
    public var endKeyDocID: String?
    public var inclusiveEnd = true
    public var descending = false
    public var limit: Int?
    public var skip = 0
    public var includeDocs = false
    public var conflicts = false
    /// nil: reduce when the view has a reduce function.
    public var reduce: Bool?
    /// nil: not given; `.exact` for `group=true`.
    var grouping: ViewGrouping.Level?
    public var updateSeq = false
    public var update = Update.true

    public init() {}

    /// `group=true`.
    public var group: Bool {
        get { grouping == .exact }
        set { grouping = newValue ? .exact : (grouping == .exact ? nil : grouping) }
    }

    /// `group_level=n`.
    public var groupLevel: Int? {
        get { if case .level(let n)? = grouping { return n } else { return nil } }
        set { grouping = newValue.map { .level($0) } }
    }

    /// Whether this query reduces a view that has (`reduces`) or lacks a reduce function.
    public func isReduce(viewReduces: Bool) -> Bool { viewReduces && reduce != false }

    /// CouchDB's checks of the parameters against the view; throws `.queryParse`.
    public func validate(viewReduces: Bool) throws(ViewError) {
        if keys != nil && (startKey != nil || endKey != nil) {
            throw .queryParse("`keys` is incompatible with `key`, `start_key` and `end_key`")
        }
        if !viewReduces {
            if reduce == true { throw .queryParse("Reduce is invalid for map-only views.") }
            if grouping != nil { throw .queryParse("Invalid use of grouping on a map view.") }
        }
        if isReduce(viewReduces: viewReduces) {
            if includeDocs { throw .queryParse("`include_docs` is invalid for reduce") }
            if conflicts { throw .queryParse("`conflicts` is invalid for reduce") }
            if keys != nil, grouping == nil || grouping == .level(0) {
                throw .queryParse("Multi-key fetches for reduce views must use `group=true`")
            }
        }
        if let startKey, let endKey {
            var order = ViewCollation.compare(startKey, endKey)
            if order == .orderedSame, let startKeyDocID, let endKeyDocID {
                order = startKeyDocID < endKeyDocID ? .orderedAscending : (startKeyDocID == endKeyDocID ? .orderedSame : .orderedDescending)
            }
            if !descending && order == .orderedDescending {
                throw .queryParse("No rows can match your key range, reverse your start_key and end_key or set descending=true")
            }
            if descending && order == .orderedAscending {
                throw .queryParse("No rows can match your key range, reverse your start_key and end_key or set descending=false")
            }
        }
    }
}
