import AccessControl
import DocumentModel
import DocumentStore
import HTTPTypes
import Query

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

    init(_ error: ViewError) {
        self.init(HTTPResponse.Status(code: error.httpStatus), error.error, error.reason)
    }

    init(_ error: PrincipalError) {
        let status = HTTPResponse.Status(code: error.status)
        let name: String = switch error.status {
        case 401: "Unauthorized"
        case 403: "forbidden"
        case 404: "not_found"
        case 409: "conflict"
        case 500...: "internal_error"
        default: "bad_request"
        }
        self.init(status, name, error.reason)
    }

    /// 403 for a document the user's channels do not include.
    static let forbiddenDocument = HTTPFailure(.forbidden, "forbidden", "forbidden")

    var json: JSON { ["error": .string(error), "reason": .string(reason)] }
}
