import HTTPTypes

/// Cross-origin access for browser apps, as Sync Gateway's top-level `"CORS"` config
/// sets it (`origin`, `loginorigin`, `headers`, `maxAge`) plus Shoal's `admin`.
///
/// Rules (docs/configuration.md, "CORS"):
/// - A request whose `Origin` is allowed gets `Access-Control-Allow-Origin` with that
///   origin echoed. Allowed: an origin listed in `origin`, any origin when `origin`
///   holds `*`, and on `_session` (`/_session`, `/{db}/_session`) an origin listed in
///   `loginorigin`.
/// - `Access-Control-Allow-Credentials: true` (cookies, so a session can be used) only
///   for origins listed by name: on `_session` those in `loginorigin` (an origin only
///   in `origin` may call it but gets no cookie), elsewhere those in `origin` or
///   `loginorigin` — never for an origin allowed only through `*`.
/// - `OPTIONS` (the preflight) is answered on every route, without authentication,
///   `204` with the allowed methods, `headers` and `maxAge`.
/// - Every answer carries `Vary: Origin`.
/// - The public port only, unless `admin` is set.
public struct CORSPolicy: Sendable, Equatable {
    /// Origins allowed on every route (`*`: any origin).
    public var origins: [String]
    /// Origins allowed to log in (`_session`) with credentials.
    public var loginOrigins: [String]
    /// Request headers a preflight allows.
    public var headers: [String]
    /// How long a browser may cache a preflight, in seconds (nil: not sent).
    public var maxAge: Int?
    /// Also on the admin port.
    public var onAdminPort: Bool

    /// Headers allowed when the config names none: what a JSON API with Basic
    /// authentication needs.
    public static let defaultHeaders = ["Authorization", "Content-Type"]
    /// Methods a preflight allows.
    public static let methods = "DELETE, GET, HEAD, OPTIONS, POST, PUT"

    public init(
        origins: [String] = [], loginOrigins: [String] = [], headers: [String] = CORSPolicy.defaultHeaders,
        maxAge: Int? = nil, onAdminPort: Bool = false
    ) {
        self.origins = origins
        self.loginOrigins = loginOrigins
        self.headers = headers
        self.maxAge = maxAge
        self.onAdminPort = onAdminPort
    }

    /// Whether `origin` may read answers on a route: nil when it may not; otherwise
    /// whether it may send credentials too.
    func allowsCredentials(origin: String, sessionRoute: Bool) -> Bool? {
        if loginOrigins.contains(origin) || (!sessionRoute && origins.contains(origin)) { return true }
        if sessionRoute && origins.contains(origin) { return false }
        return origins.contains("*") ? false : nil
    }

    /// The CORS headers of an answer to a request from `origin` (nil: no `Origin`).
    func responseHeaders(origin: String?, sessionRoute: Bool) -> HTTPFields {
        var fields: HTTPFields = [.vary: "Origin"]
        guard let origin, let credentials = allowsCredentials(origin: origin, sessionRoute: sessionRoute) else { return fields }
        fields[.accessControlAllowOrigin] = origin
        if credentials { fields[.accessControlAllowCredentials] = "true" }
        return fields
    }

    /// The headers of a preflight's `204` answer.
    func preflightHeaders(origin: String?, sessionRoute: Bool) -> HTTPFields {
        var fields = responseHeaders(origin: origin, sessionRoute: sessionRoute)
        fields[.allow] = Self.methods
        guard fields[.accessControlAllowOrigin] != nil else { return fields }
        fields[.accessControlAllowMethods] = Self.methods
        if !headers.isEmpty { fields[.accessControlAllowHeaders] = headers.joined(separator: ", ") }
        if let maxAge { fields[.accessControlMaxAge] = String(maxAge) }
        return fields
    }

    /// `/_session` and `/{db}/_session`.
    static func isSessionRoute(_ segments: [String]) -> Bool {
        segments.last == "_session" && segments.count <= 2
    }
}
