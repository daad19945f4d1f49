/// Why a BLIP upgrade (`/{db}/_blipsync`) is refused: the HTTP status and reason the
/// client gets instead of `101 Switching Protocols`, with the same JSON error body and
/// headers as the REST API (401 carries `WWW-Authenticate: Basic`, which Couchbase
/// Lite 2.x waits for before it sends credentials).
public struct SyncRefusal: Error, Sendable, Equatable {
    /// 401 (no or bad credentials), 403 (forbidden, e.g. a disabled user), 404 (no such
    /// database), 409 (a mesh link with that node is already up), …
    public let status: Int
    public let reason: String

    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }

    public static func noDatabase(_ name: String) -> SyncRefusal {
        SyncRefusal(status: 404, reason: "no such database '\(name)'")
    }
}
