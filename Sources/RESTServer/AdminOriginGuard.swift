import HTTPTypes

/// Keeps web pages of other origins from writing through the admin port (CSRF).
///
/// The admin port has no authentication: whoever reaches it is an administrator. A
/// browser on the same machine reaches it too, and any page it shows may send a "simple"
/// cross-origin request (`POST` with a `text/plain` body, no preflight) that the node
/// would read as JSON — creating a user, changing the sync function. Browsers name the
/// page's origin in `Origin` on every such request, so `AdminOriginGuard` refuses a
/// request that changes something (any method but `GET`, `HEAD`, `OPTIONS`) when its
/// `Origin` is neither the admin listener's own (the admin UI at `/_admin/`) nor an
/// origin the CORS config allows on the admin port. Requests without `Origin` (curl,
/// replicators, other programs) are not affected. Pure.
struct AdminOriginGuard: Sendable {
    let cors: CORSPolicy?

    /// Why the request is refused (nil: it may go on).
    func refusal(method: HTTPRequest.Method, origin: String?, authority: String?) -> HTTPFailure? {
        guard let origin, ![.get, .head, .options].contains(method) else { return nil }
        if let authority, Self.authority(of: origin) == authority.lowercased() { return nil }
        if let cors, cors.onAdminPort, cors.allowsCredentials(origin: origin, sessionRoute: false) != nil { return nil }
        return HTTPFailure(
            .forbidden, "forbidden",
            "The admin port refuses writes from web pages of another origin (Origin: \(origin))")
    }

    /// `host:port` of an origin (`http://host:port`), lowercased; the origin itself when
    /// it has no scheme.
    static func authority(of origin: String) -> String {
        guard let range = origin.range(of: "://") else { return origin.lowercased() }
        return origin[range.upperBound...].lowercased()
    }
}
