import AccessControl
import BLIP
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
    /// `/{db}/_blipsync` without a WebSocket upgrade offering a subprotocol we speak.
    static let needsBLIPUpgrade = badRequest(
        "This endpoint needs a WebSocket upgrade with subprotocol "
            + BLIPWebSocket.acceptedSubprotocols.joined(separator: " or "))

    init(_ error: StoreError) {
        self.init(HTTPResponse.Status(code: error.httpStatus), error.error, error.reason)
    }

    init(_ error: ViewError) {
        self.init(HTTPResponse.Status(code: error.httpStatus), error.error, error.reason)
    }

    init(_ error: PrincipalError) {
        self.init(status: error.status, reason: error.reason)
    }

    init(_ refusal: SyncRefusal) {
        self.init(status: refusal.status, reason: refusal.reason)
    }

    init(_ error: ReplicationControlError) {
        if error.status == 507 {
            self.init(.init(code: 507), StoreError.Kind.insufficientStorage.rawValue, error.reason)
        } else {
            self.init(status: error.status, reason: error.reason)
        }
    }

    /// A status with Sync Gateway's error name for it.
    init(status code: Int, reason: String) {
        let name: String = switch code {
        case 401: "Unauthorized"
        case 403: "forbidden"
        case 404: "not_found"
        case 409: "conflict"
        case 500...: "internal_error"
        default: "bad_request"
        }
        self.init(HTTPResponse.Status(code: code), name, reason)
    }

    /// Sync Gateway's challenge, sent with every 401 (Couchbase Lite 2.x sends its
    /// credentials only after it).
    static let challenge = "Basic realm=\"Couchbase Sync Gateway\""

    /// Headers every answer with this failure carries.
    var headers: HTTPFields { status == .unauthorized ? [.wwwAuthenticate: Self.challenge] : [:] }

    /// 403 for a document the user's channels do not include.
    static let forbiddenDocument = HTTPFailure(.forbidden, "forbidden", "forbidden")

    var json: JSON { ["error": .string(error), "reason": .string(reason)] }
}
