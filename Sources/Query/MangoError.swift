/// A `_find`, `_index` or `_explain` request Shoal cannot answer, with CouchDB's
/// `error` string, reason and HTTP status.
public struct MangoError: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: Int
    public let error: String
    public let reason: String

    public init(status: Int, error: String, reason: String) {
        self.status = status
        self.error = error
        self.reason = reason
    }

    public var description: String { "\(error): \(reason)" }

    static func invalidSelector(_ reason: String) -> MangoError {
        MangoError(status: 400, error: "invalid_selector", reason: reason)
    }

    static func invalidOperator(_ op: String) -> MangoError {
        MangoError(status: 400, error: "invalid_operator", reason: "Invalid operator: \(op)")
    }

    static func badRequest(_ reason: String) -> MangoError {
        MangoError(status: 400, error: "bad_request", reason: reason)
    }

    static let noUsableIndexForSort = MangoError(
        status: 400, error: "no_usable_index",
        reason: "No global index exists for this sort, try indexing by the sort fields.")

    static func unsupportedMixedSort() -> MangoError {
        MangoError(status: 400, error: "unsupported_mixed_sort", reason: "Sorts currently only support a single direction for all fields.")
    }
}
