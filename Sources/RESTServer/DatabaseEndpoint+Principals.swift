import AccessControl
import DocumentModel
import DocumentStore
import Foundation
import HTTPTypes
import Hummingbird

/// Users, roles and sessions: Sync Gateway's `/{db}/_user/…`, `/{db}/_role/…` (admin
/// port) and `/{db}/_session` (both ports).
extension DatabaseEndpoint {
    /// The database's security, or 404 when it has no access control.
    private func requireSecurity() throws(HTTPFailure) -> DatabaseSecurity {
        guard let security else { throw HTTPFailure.notFound("database '\(store.name)' has no users") }
        return security
    }

    /// `GET/PUT/DELETE /{db}/_user/{name}`, `GET/POST /{db}/_user/` (likewise `_role`).
    func principals(_ kind: DocumentStore.PrincipalKind, name: String?, extra: Bool) async throws -> Response {
        try request.requireAdmin("Users and roles are managed on the admin port")
        let security = try requireSecurity()
        guard !extra else { throw HTTPFailure.notFound() }
        do {
            guard let name, !name.isEmpty else {
                switch request.method {
                case .get, .head:
                    return RESTResponse.json(.array(try await security.names(kind).map { .string($0) }))
                case .post:
                    let body = try await request.jsonBody(limit: configuration.maxRequestBytes)
                    guard let bodyName = body["name"]?.stringValue else { throw HTTPFailure.badRequest("Missing \"name\"") }
                    guard try await exists(kind, bodyName, security) == false else {
                        throw HTTPFailure(.conflict, "conflict", "\(kind == .user ? "User" : "Role") \"\(bodyName)\" already exists")
                    }
                    try await put(kind, name: bodyName, body: body, security)
                    return RESTResponse.json([:], status: .created)
                default:
                    throw HTTPFailure.methodNotAllowed("GET,HEAD,POST")
                }
            }
            switch request.method {
            case .get, .head:
                return RESTResponse.json(kind == .user ? try await security.userJSON(name: name) : try await security.roleJSON(name: name))
            case .put:
                let body = try await request.jsonBody(limit: configuration.maxRequestBytes)
                let created = try await put(kind, name: name, body: body, security)
                return RESTResponse.json([:], status: created ? .created : .ok)
            case .delete:
                if kind == .user { try await security.deleteUser(name: name) } else { try await security.deleteRole(name: name) }
                return RESTResponse.json([:])
            default:
                throw HTTPFailure.methodNotAllowed("GET,HEAD,PUT,DELETE")
            }
        } catch let error as PrincipalError {
            throw HTTPFailure(error)
        }
    }

    private func exists(_ kind: DocumentStore.PrincipalKind, _ name: String, _ security: DatabaseSecurity) async throws(PrincipalError) -> Bool {
        kind == .user ? try await security.user(named: name) != nil : try await security.role(named: name) != nil
    }

    @discardableResult
    private func put(_ kind: DocumentStore.PrincipalKind, name: String, body: JSON, _ security: DatabaseSecurity) async throws(PrincipalError) -> Bool {
        kind == .user ? try await security.putUser(name: name, json: body) : try await security.putRole(name: name, json: body)
    }

    /// `POST/GET/DELETE /{db}/_session`. Public port: log in with name and password
    /// (sets the `SyncGatewaySession` cookie), show who is logged in, log out. Admin
    /// port: `POST {"name", "ttl"}` creates a session for a user.
    func session() async throws -> Response {
        let security = try requireSecurity()
        do {
            switch request.method {
            case .post where request.isAdmin:
                let body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
                guard let name = body["name"]?.stringValue else { throw HTTPFailure.badRequest("Missing \"name\"") }
                let ttl = body["ttl"]?.doubleValue ?? DatabaseSecurity.defaultSessionTTL
                guard ttl > 0 else { throw HTTPFailure.badRequest("Invalid ttl") }
                let session = try await security.createSession(user: name, ttl: ttl)
                return RESTResponse.json([
                    "session_id": .string(session.id), "expires": .string(Self.iso8601(session.expires)),
                    "cookie_name": .string(DatabaseSecurity.sessionCookieName),
                ])
            case .post:
                let body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
                guard let name = body["name"]?.stringValue, let password = body["password"]?.stringValue else {
                    throw HTTPFailure(.unauthorized, "Unauthorized", "Invalid login")
                }
                let session = try await security.login(name: name, password: password)
                let context = try await sessionInfo(try await security.authenticate(
                    authorization: nil, cookie: "\(DatabaseSecurity.sessionCookieName)=\(session.id)"))
                return RESTResponse.json(context, headers: [.setCookie: cookie(session.id, expires: session.expires)])
            case .get, .head:
                if request.isAdmin { return RESTResponse.json(try await sessionInfo(.admin)) }
                let principal = (try? await security.authenticate(
                    authorization: request.headers[.authorization], cookie: request.headers[.cookie]))
                return RESTResponse.json(try await sessionInfo(principal))
            case .delete:
                if let id = request.headers[.cookie].flatMap(DatabaseSecurity.sessionID(fromCookie:)) {
                    _ = await security.endSession(id: id)
                }
                return RESTResponse.json([:], headers: [.setCookie: cookie("", expires: Date(timeIntervalSince1970: 0))])
            default:
                throw HTTPFailure.methodNotAllowed("GET,HEAD,POST,DELETE")
            }
        } catch let error as PrincipalError {
            throw HTTPFailure(error)
        }
    }

    /// Sync Gateway's session answer: `{"authentication_handlers", "ok", "userCtx": {"channels", "name"}}`.
    private func sessionInfo(_ principal: Principal?) async throws -> JSON {
        var context: [String: JSON] = ["channels": [:], "name": .null]
        if let access = principal?.access {
            context["name"] = access.user.isGuest ? .null : .string(access.user.name)
            context["channels"] = .object(access.channels.mapValues { .int(Int64(clamping: $0)) })
        }
        return ["authentication_handlers": ["default", "cookie"], "ok": true, "userCtx": .object(context)]
    }

    private func cookie(_ id: String, expires: Date) -> String {
        Self.sessionCookie(id, expires: expires, path: "/\(store.name)")
    }

    /// The `Set-Cookie` value of a session (`path`: `/{db}`, or `/` for the server's).
    static func sessionCookie(_ id: String, expires: Date, path: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return "\(DatabaseSecurity.sessionCookieName)=\(id); Path=\(path); Expires=\(formatter.string(from: expires)); HttpOnly"
    }

    static func iso8601(_ date: Date) -> String {
        ISO8601Time.string(date)
    }

    /// `GET /{db}/_raw/{id}` (admin): the current revision with Shoal's access metadata
    /// in `_sync` (revision, sequence, channels, grants, leaves).
    func raw(docID: String) async throws -> Response {
        try allow(request, "GET,HEAD", request.isRead)
        guard !docID.isEmpty else { throw HTTPFailure.notFound() }
        let metadata: DocumentMetadata
        let body: [String: JSON]?
        let access: RevisionAccess?
        let origins: [RevID: RevisionOrigin]
        let vector: VersionVector?
        do {
            guard let found = try await store.metadata(docID) else { throw HTTPFailure.notFound() }
            metadata = found
            body = try await store.revision(docID, rev: found.winner).1.body
            access = try await store.currentAccess(docIDs: [docID])[docID]
            origins = try await store.origins(of: found.tree)
            vector = try await store.versionVector(docID, rev: found.winner)
        } catch let error as StoreError {
            throw HTTPFailure(error)
        }
        var document = body ?? [:]
        var sync: [String: JSON] = [
            "rev": .string(metadata.winner.description),
            "sequence": .int(Int64(metadata.sequence)),
            "leaves": .array(metadata.tree.leaves.map { .string($0.description) }),
            "tree": Self.treeJSON(metadata.tree, origins: origins),
        ]
        if let vector { sync["vv"] = .string(vector.text(style: .syncGateway)) }
        if let access {
            sync["channels"] = .object(Dictionary(uniqueKeysWithValues: access.channels.map { ($0, JSON.null) }))
            if !access.access.isEmpty { sync["access"] = .object(access.access.mapValues { .array($0.sorted().map { .string($0) }) }) }
            if !access.roles.isEmpty { sync["role_access"] = .object(access.roles.mapValues { .array($0.sorted().map { .string($0) }) }) }
            if let expiry = access.expiry { sync["exp"] = expiry }
        }
        if metadata.tree.isDeleted { document["_deleted"] = true }
        document["_id"] = .string(docID)
        document["_rev"] = .string(metadata.winner.description)
        document["_sync"] = .object(sync)
        return RESTResponse.json(.object(document))
    }
}

extension DatabaseEndpoint {
    /// Every revision of a document's tree (`_sync.tree` of `_raw`, drawn by the admin
    /// UI): its ID, parent, whether it is deleted, whether its body is stored, the
    /// local sequence at which it arrived, and where it came from when that is recorded.
    static func treeJSON(_ tree: RevTree, origins: [RevID: RevisionOrigin] = [:]) -> JSON {
        .array(tree.nodes.map { node in
            var entry: [String: JSON] = [
                "rev": .string(node.revID.description), "deleted": .bool(node.deleted), "body": .bool(node.hasBody),
                "seq": .int(Int64(node.sequence)),
            ]
            if let parent = node.parent { entry["parent"] = .string(tree.nodes[parent].revID.description) }
            if let origin = origins[node.revID] { entry["origin"] = originJSON(origin) }
            return .object(entry)
        })
    }

    /// `{"kind": "local|resolver|peer", "node": …, "detail": …}` (absent fields unknown).
    static func originJSON(_ origin: RevisionOrigin) -> JSON {
        var object: [String: JSON] = ["kind": .string(origin.kind.rawValue)]
        if let node = origin.node { object["node"] = .string(node) }
        if let detail = origin.detail { object["detail"] = .string(detail) }
        return .object(object)
    }
}
