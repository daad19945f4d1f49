import AccessControl
import DocumentModel
import Foundation
import HTTPTypes
import Hummingbird

/// CouchDB's server-level `/_session`, which browser apps (PouchDB's authentication,
/// `fetch` with `credentials: "include"`) call before they replicate. Users belong to
/// databases in Shoal (as in Sync Gateway, whose `/{db}/_session` this reuses), so:
/// - `POST` (`{"name", "password"}` as JSON or a form) logs the user in to every
///   database where that name and password are valid, under one session ID, and sets
///   one `SyncGatewaySession` cookie for `Path=/` (so every `/{db}/…` request sends
///   it); 401 `Invalid login` when they are valid nowhere (403 when the user is
///   disabled). Answer: `{"ok": true, "name", "roles"}`.
/// - `GET` answers `{"ok": true, "userCtx": {"name", "roles"}, "info": {…}}` for Basic
///   credentials (401 when they are valid nowhere), else the session cookie, else
///   anonymous (`name: null`); on the admin port, `_admin`.
/// - `DELETE` ends the cookie's session in every database and expires the cookie.
extension RESTHandler {
    func serverSession(_ request: RESTRequest) async throws -> Response {
        let securities = registry.databaseNames.sorted().compactMap { registry.security(database: $0) }
        switch request.method {
        case .post:
            let (name, password) = try await Self.loginCredentials(request, limit: configuration.maxRequestBytes)
            let id = DatabaseSecurity.newSessionID()
            var expires: Date?
            var roles = Set<String>()
            var refusal = HTTPFailure(.unauthorized, "Unauthorized", "Invalid login")
            for security in securities {
                do {
                    let session = try await security.login(name: name, password: password, sessionID: id)
                    expires = session.expires
                    if let user = try await security.user(named: name) {
                        roles.formUnion(try await security.access(for: user).roles.keys)
                    }
                } catch let error where error.status == 403 {
                    refusal = HTTPFailure(error)
                } catch {
                    continue
                }
            }
            guard let expires else { throw refusal }
            return RESTResponse.json(
                ["ok": true, "name": .string(name), "roles": .array(roles.sorted().map { .string($0) })],
                headers: [.setCookie: DatabaseEndpoint.sessionCookie(id, expires: expires, path: "/")])
        case .get, .head:
            if isAdmin { return RESTResponse.json(Self.sessionAnswer(name: nil, roles: ["_admin"], method: nil)) }
            let authorization = request.headers[.authorization]
            let cookie = authorization == nil ? request.headers[.cookie] : nil
            for security in securities {
                guard let principal = try? await security.authenticate(authorization: authorization, cookie: cookie),
                      let access = principal.access, !access.user.isGuest
                else { continue }
                let method = authorization == nil ? "cookie" : "default"
                return RESTResponse.json(Self.sessionAnswer(name: access.user.name, roles: access.roles.keys.sorted(), method: method))
            }
            if authorization != nil { throw HTTPFailure(.unauthorized, "Unauthorized", "Invalid login") }
            return RESTResponse.json(Self.sessionAnswer(name: nil, roles: [], method: nil))
        case .delete:
            if let id = request.headers[.cookie].flatMap(DatabaseSecurity.sessionID(fromCookie:)) {
                for security in securities { _ = await security.endSession(id: id) }
            }
            return RESTResponse.json(
                ["ok": true], headers: [.setCookie: DatabaseEndpoint.sessionCookie("", expires: Date(timeIntervalSince1970: 0), path: "/")])
        default:
            throw HTTPFailure.methodNotAllowed("GET,HEAD,POST,DELETE")
        }
    }

    /// CouchDB's `GET /_session` answer.
    static func sessionAnswer(name: String?, roles: [String], method: String?) -> JSON {
        var info: [String: JSON] = ["authentication_handlers": ["default", "cookie"]]
        if let method { info["authenticated"] = .string(method) }
        return [
            "ok": true,
            "userCtx": ["name": name.map { .string($0) } ?? .null, "roles": .array(roles.map { .string($0) })],
            "info": .object(info),
        ]
    }

    /// `name` and `password` from a JSON body or an HTML form
    /// (`application/x-www-form-urlencoded`), as CouchDB accepts them.
    static func loginCredentials(_ request: RESTRequest, limit: Int) async throws(HTTPFailure) -> (String, String) {
        let name: String?
        let password: String?
        if request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
            let buffer = try await request.collectBody(limit: limit)
            let form = QueryParameters(String(buffer: buffer))
            (name, password) = (form["name"], form["password"])
        } else {
            let body = try await request.jsonObjectBody(limit: limit)
            (name, password) = (body["name"]?.stringValue, body["password"]?.stringValue)
        }
        guard let name, !name.isEmpty, let password else { throw HTTPFailure(.unauthorized, "Unauthorized", "Invalid login") }
        return (name, password)
    }
}
