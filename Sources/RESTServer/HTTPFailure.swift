import DocumentModel
import DocumentStore
import HTTPTypes

/// An error answer: HTTP status plus CouchDB's `{"error": …, "reason": …}` body.
struct HTTPFailure: Error, Sendable {
    let status: HTTPResponse.Status
    let error: String
    let reason: String

    init(_ status: HTTPResponse.Status, _ error: String, _ reason: String) {
        self.status = status
        self.error = error
        self.reason = reason
    }

    static func badRequest(_ reason: String) -> HTTPFailure { HTTPFailure(.badRequest, "bad_request", reason) }
    static func notFound(_ reason: String = "missing") -> HTTPFailure { HTTPFailure(.notFound, "not_found", reason) }
    static func methodNotAllowed(_ allowed: String) -> HTTPFailure {
        HTTPFailure(.methodNotAllowed, "method_not_allowed", "Only \(allowed) allowed")
    }
    static let conflict = HTTPFailure(.conflict, "conflict", "Document update conflict")

    init(_ error: StoreError) {
        self.init(HTTPResponse.Status(code: error.httpStatus), error.error, error.reason)
    }

    var json: JSON { ["error": .string(error), "reason": .string(reason)] }
}
