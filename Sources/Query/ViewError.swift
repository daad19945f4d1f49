import DocumentStore
import JSEngine

/// Why a view could not be defined, built or queried.
///
/// `ViewError` owns the mapping of view failures to CouchDB's error names and HTTP
/// statuses (`query_parse_error` 400, `not_found` 404, `os_process_error` 500), so every
/// caller (REST, live queries) reports them the same way.
public enum ViewError: Error, Sendable, Equatable {
    /// A design document's `views` member is malformed (400 `bad_request`).
    case invalidDesign(String)
    /// A function did not compile: the engine's message (400 `compilation_error`).
    case compile(view: String, message: String)
    /// A bad query parameter, with CouchDB's message (400 `query_parse_error`).
    case queryParse(String)
    /// No such design document (404 `not_found`, reason `missing` or `deleted`).
    case missingDesign(String)
    /// The design document has no such view (404 `not_found`, `missing_named_view`).
    case missingView(String)
    /// A map or reduce function overran its time budget or failed as a whole (500).
    case functionFailed(String)
    /// The store failed.
    case storage(StoreError)

    public var httpStatus: Int {
        switch self {
        case .invalidDesign, .compile, .queryParse: return 400
        case .missingDesign, .missingView: return 404
        case .functionFailed: return 500
        case .storage(let error): return error.httpStatus
        }
    }

    /// CouchDB's `error` member.
    public var error: String {
        switch self {
        case .invalidDesign: return "bad_request"
        case .compile: return "compilation_error"
        case .queryParse: return "query_parse_error"
        case .missingDesign, .missingView: return "not_found"
        case .functionFailed: return "os_process_error"
        case .storage(let error): return error.error
        }
    }

    /// CouchDB's `reason` member.
    public var reason: String {
        switch self {
        case .invalidDesign(let text), .queryParse(let text), .functionFailed(let text): return text
        case let .compile(view, message): return "Compilation of the function in view \(view) failed: \(message)"
        case .missingDesign(let reason): return reason
        case .missingView: return "missing_named_view"
        case .storage(let error): return error.reason
        }
    }
}
