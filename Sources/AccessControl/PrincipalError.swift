import DocumentModel
import DocumentStore

/// Why a principal (user or role) definition was refused, with a Sync Gateway–like reason.
///
/// `status` is the HTTP status the admin API should answer (400 for bad input, 404 for an
/// unknown principal); `reason` is the text of Sync Gateway's `{"error","reason"}` body.
public struct PrincipalError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var reason: String

    public init(status: Int = 400, reason: String) {
        self.status = status
        self.reason = reason
    }

    /// A store failure, with the HTTP status and reason it stands for.
    public init(_ error: StoreError) {
        self.init(status: error.httpStatus, reason: error.reason)
    }

    public var description: String { "\(status) \(reason)" }
}
