import AccessControl
import DocumentModel
import DocumentStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// Answers every HTTP request of one listener (public or admin): routes it to the
/// endpoint, turns failures into CouchDB-style JSON errors, and never lets an error
/// escape to the server.
public struct RESTHandler: Sendable {
    let registry: any DatabaseRegistry
    let configuration: RESTConfiguration
    let isAdmin: Bool
    let logger: Logger
    let replications: (any ReplicationController)?
    let mesh: (any MeshController)?
    let nemesis: (any NemesisController)?
    let metrics: RequestMetrics?
    /// SHA-256 of this listener's TLS certificate, when it has one (mesh proofs bind to it).
    let tlsCertificateDigest: [UInt8]?
    /// The admin UI's metric samples (`RESTHandler+Admin.swift`).
    let metricsHistory = MetricsHistory()

    public init(
        registry: any DatabaseRegistry, configuration: RESTConfiguration, isAdmin: Bool, logger: Logger,
        replications: (any ReplicationController)? = nil, mesh: (any MeshController)? = nil,
        nemesis: (any NemesisController)? = nil, metrics: RequestMetrics? = nil, tlsCertificateDigest: [UInt8]? = nil
    ) {
        self.tlsCertificateDigest = tlsCertificateDigest
        self.mesh = mesh
        self.nemesis = nemesis
        self.metrics = metrics
        self.registry = registry
        self.configuration = configuration
        self.isAdmin = isAdmin
        self.logger = logger
        self.replications = replications
    }

    /// The Hummingbird responder for this handler.
    public var responder: CallbackResponder<BasicRequestContext> {
        CallbackResponder { request, _ in await respond(to: request) }
    }

    public func respond(to request: Request) async -> Response {
        let start = ContinuousClock.now
        var response: Response
        let cors = configuration.cors.flatMap { !isAdmin || $0.onAdminPort ? $0 : nil }
        do {
            let rest = try RESTRequest(request, isAdmin: isAdmin)
            if isAdmin, let refusal = AdminOriginGuard(cors: cors).refusal(
                method: request.method, origin: request.headers[.origin], authority: request.head.authority)
            {
                throw refusal
            }
            if let cors, request.method == .options {
                // The preflight: no authentication, on every route.
                let fields = cors.preflightHeaders(origin: request.headers[.origin], sessionRoute: CORSPolicy.isSessionRoute(rest.segments))
                response = Response(status: .noContent, headers: fields)
            } else {
                response = try await route(rest)
            }
        } catch {
            let failure: HTTPFailure = switch error {
            case let failure as HTTPFailure: failure
            // A store failure an endpoint did not map itself (e.g. a full disk while an
            // attachment streams in: 507, not 500).
            case let error as StoreError: HTTPFailure(error)
            default: HTTPFailure(.internalServerError, "internal_error", "\(error)")
            }
            if failure.status.code >= 500, ![503, 507].contains(failure.status.code) {
                // A server-side failure is always in the log with its reason (the client
                // sees the same reason in the body). 503 and 507 are expected states that
                // the store already logs when they begin.
                logger.error("\(request.method) \(request.uri.path) → \(failure.status.code) \(failure.error): \(failure.reason)")
            }
            response = RESTResponse.failure(failure)
        }
        // HEAD: the GET answer's headers (Content-Length included) without its body.
        if request.method == .head { response = response.createHeadResponse() }
        response.headers[.server] = "Shoal/\(configuration.version)"
        if let cors, request.method != .options {
            let sessionRoute = CORSPolicy.isSessionRoute(request.uri.path.split(separator: "/").map(String.init))
            for field in cors.responseHeaders(origin: request.headers[.origin], sessionRoute: sessionRoute) {
                response.headers[field.name] = field.value
            }
        }
        let elapsed = ContinuousClock.now - start
        metrics?.record(method: request.method.rawValue, status: response.status.code, duration: elapsed)
        logger.debug("\(request.method) \(request.uri)\(isAdmin ? " (ADMIN)" : "") → \(response.status.code) (\(Self.milliseconds(elapsed)) ms)")
        return response
    }

    /// `elapsed` in milliseconds with three decimals, for the request log ("0.412").
    static func milliseconds(_ elapsed: Duration) -> String {
        let (seconds, attoseconds) = elapsed.components
        let micros = max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        let fraction = String(micros % 1000)
        return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    private func route(_ request: RESTRequest) async throws -> Response {
        let segments = request.segments
        guard let first = segments.first else { return try welcome(request) }
        if first == "_all_dbs" {
            try allow(request, "GET,HEAD", request.isRead)
            return RESTResponse.json(.array(registry.databaseNames.sorted().map { .string($0) }))
        }
        if first == "_metrics" {
            try allow(request, "GET,HEAD", request.isRead)
            try request.requireAdmin("Metrics are on the admin port")
            let text = mesh?.metricsText() ?? ""
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        }
        if first == "_openapi.json" {
            try allow(request, "GET,HEAD", request.isRead)
            try request.requireAdmin("The OpenAPI document is on the admin port")
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: OpenAPIDocument.json)))
        }
        if first == "_mesh" {
            try allow(request, "GET,HEAD", request.isRead)
            try request.requireAdmin("The mesh status is on the admin port")
            guard let mesh else { throw HTTPFailure.notFound("no mesh") }
            return RESTResponse.json(await mesh.meshStatus())
        }
        if first == "_nemesis" { return try await nemesisRoute(request) }
        if first == "_active_tasks" {
            try allow(request, "GET,HEAD", request.isRead)
            try request.requireAdmin("Active tasks are listed on the admin port")
            guard let replications else { return RESTResponse.json(.array([])) }
            return RESTResponse.json(ActiveTasks.list(databases: registry.databaseNames, controller: replications))
        }
        if first == "_session" { return try await serverSession(request) }
        if first == "_admin" { return try await adminUI(request) }
        if first.hasPrefix("_") { throw HTTPFailure.notFound("Unknown URL") }
        let (store, collection, name) = try keyspaceStore(first)
        var database = DatabaseEndpoint(store: store, request: request, configuration: configuration, logger: logger)
        let rest = Array(segments.dropFirst())
        if !collection.isDefault, let endpoint = rest.first, Self.databaseOnlyEndpoints.contains(endpoint) {
            throw HTTPFailure.notFound("\(endpoint) is not served on a collection's keyspace")
        }
        database.security = registry.security(database: name)
        database.views = registry.views(database: name)
        switch rest.first {
        case "_user": return try await database.principals(.user, name: rest.dropFirst().first, extra: rest.count > 2)
        case "_role": return try await database.principals(.role, name: rest.dropFirst().first, extra: rest.count > 2)
        case "_session": return try await database.session()
        default: break
        }
        if rest.first == "_blipsync", let security = database.security,
           let nodeID = request.headers[HTTPField.Name("X-Shoal-Node-ID")!]
        {
            // A node that says it is a mesh peer but cannot prove the mesh secret (the
            // request may have come over TLS or not: either binding explains it).
            let proof = request.headers[HTTPField.Name(MeshSecret.header)!]
            let refusals = [nil, tlsCertificateDigest].map {
                security.meshRefusal(nodeID: nodeID, proof: proof, binding: $0, consume: false)
            }
            let reasons = refusals.compactMap { $0 }
            if reasons.count == refusals.count {
                // A proof that is valid for one of the bindings says what else is wrong.
                let missing = DatabaseSecurity.meshSecretMissing
                throw HTTPFailure(.unauthorized, "Unauthorized", reasons.first { $0 != missing } ?? missing)
            }
        }
        if !request.isAdmin, let security = database.security {
            database.principal = try await Self.authenticate(request, security: security)
        }
        guard let second = rest.first else { return try await database.root() }
        switch second {
        case "_all_docs": return try await database.allDocs()
        case "_design_docs": return try await database.designDocs()
        case "_view_cleanup":
            try database.requireAdminPrincipal("_view_cleanup is on the admin port")
            return try await database.viewCleanup()
        case "_changes": return try await database.changes()
        case "_bulk_docs": return try await database.bulkDocs()
        case "_bulk_get": return try await database.bulkGet()
        case "_revs_diff": return try await database.revsDiff()
        case "_find": return try await database.find()
        case "_explain": return try await database.explain()
        case "_index": return try await database.index(path: rest.dropFirst())
        case "_compact", "_purge", "_conflicts", "_raw", "_resync", "_rekey":
            try database.requireAdminPrincipal("\(second) is on the admin port")
            switch second {
            case "_compact": return try await database.compact()
            case "_rekey": return try await database.rekey(registry: registry)
            case "_resync": return try await database.resync()
            case "_purge": return try await database.purge()
            case "_raw": return try await database.raw(docID: rest.dropFirst().joined(separator: "/"))
            default: return try await database.conflicts(monitor: registry.conflictMonitor(database: name))
            }
        case "_config": return try await database.config(path: rest.dropFirst(), configurator: registry as? any DatabaseConfigurator)
        case "_sync_test": return try await database.syncTest()
        case "_replication": return try await database.replication(id: rest.dropFirst().first, controller: replications)
        case "_replicationStatus": return try await database.replicationStatus(id: rest.dropFirst().first, controller: replications)
        case "_peers":
            try allow(request, "GET,HEAD", request.isRead)
            try request.requireAdmin("The mesh status is on the admin port")
            guard let peers = await mesh?.meshPeers(database: name) else {
                throw HTTPFailure.notFound("database '\(first)' takes no part in a mesh")
            }
            return RESTResponse.json(peers)
        case "_blipsync":
            // Only a GET can be a WebSocket upgrade: any other method is 405, not 400.
            try allow(request, "GET,HEAD", request.isRead)
            throw HTTPFailure.needsBLIPUpgrade
        case "_local":
            guard rest.count >= 2 else { throw HTTPFailure.notFound() }
            return try await database.local(id: rest.dropFirst().joined(separator: "/"))
        case "_design":
            guard rest.count >= 2 else { throw HTTPFailure.notFound() }
            let id = "_design/" + rest[1]
            if rest.count == 2 { return try await database.document(id: id) }
            if rest.count == 4 && rest[2] == "_view" { return try await database.view(design: rest[1], name: rest[3]) }
            return try await database.attachment(docID: id, name: rest.dropFirst(2).joined(separator: "/"))
        default:
            if second.hasPrefix("_") {
                throw HTTPFailure.badRequest("Only reserved document ids may start with underscore.")
            }
            if rest.count == 1 { return try await database.document(id: second) }
            if rest.count == 2 && rest[1] == "_resolve" {
                try database.requireAdminPrincipal("_resolve is on the admin port")
                return try await database.resolve(docID: second, monitor: registry.conflictMonitor(database: name))
            }
            return try await database.attachment(docID: second, name: rest.dropFirst().joined(separator: "/"))
        }
    }

    /// Endpoints of a database as a whole, not of one of its collections: on a named
    /// collection's keyspace (`/{db}.{collection}/…`) they are 404, as on Sync Gateway.
    /// (Design documents, views and Mango queries are each collection's own.)
    static let databaseOnlyEndpoints: Set<String> = [
        "_user", "_role", "_session", "_blipsync", "_config", "_replication", "_replicationStatus", "_peers", "_rekey",
    ]

    /// The store of a keyspace: `db` (the default collection), `db.collection` (default
    /// scope) or `db.scope.collection`; 404 for an unknown database or collection.
    private func keyspaceStore(_ keyspace: String) throws(HTTPFailure) -> (DocumentStore, CollectionName, String) {
        guard let (databaseName, collection) = CollectionName.parseKeyspace(keyspace) else {
            throw HTTPFailure.notFound("keyspace \(keyspace) not found")
        }
        guard registry.database(named: databaseName) != nil else {
            throw HTTPFailure.notFound("no such database '\(databaseName)'")
        }
        let name = collection.keyspace(in: databaseName)
        guard let store = registry.database(named: name) else {
            throw HTTPFailure.notFound("keyspace \(keyspace) not found")
        }
        return (store, collection, name)
    }

    /// The principal of a public-port request: Basic credentials, a session cookie,
    /// or GUEST; 401 otherwise.
    static func authenticate(_ request: RESTRequest, security: DatabaseSecurity) async throws(HTTPFailure) -> Principal {
        do {
            return try await security.authenticate(authorization: request.headers[.authorization], cookie: request.headers[.cookie])
        } catch {
            throw HTTPFailure(error)
        }
    }

    private func welcome(_ request: RESTRequest) throws -> Response {
        try allow(request, "GET,HEAD", request.isRead)
        var body: [String: JSON] = [
            "couchdb": "Welcome",
            "vendor": ["name": "Shoal", "version": .string(configuration.version)],
            "version": .string("Shoal/\(configuration.version)"),
        ]
        if isAdmin { body["ADMIN"] = true }
        if let nodeID = configuration.nodeID { body["node_id"] = .string(nodeID) }
        return RESTResponse.json(.object(body))
    }
}

/// Throws 405 unless `condition` holds.
func allow(_ request: RESTRequest, _ methods: String, _ condition: Bool) throws(HTTPFailure) {
    if !condition { throw .methodNotAllowed(methods) }
}

/// Settings of the REST layer.
public struct RESTConfiguration: Sendable {
    /// Shoal's version, reported by `GET /` and the `Server` header.
    public var version: String
    /// Largest request body accepted for JSON endpoints (`_bulk_docs` and the like).
    public var maxRequestBytes: Int
    /// Largest attachment accepted by `PUT /{db}/{doc}/{attachment}`.
    public var maxAttachmentBytes: Int
    /// When the server started, in microseconds since 1970 (`instance_start_time`).
    public var startTime: UInt64
    /// The node's ID, shown in `GET /` (mesh peers learn each other's IDs from it).
    public var nodeID: String?
    /// Cross-origin access for browser apps (nil: none, the default).
    public var cors: CORSPolicy?
    /// How long a connection may take to send its first request head, and sit idle
    /// between requests, before it is closed (slowloris clients); nil: forever.
    public var idleTimeout: Duration? = .seconds(30)

    public init(version: String, maxRequestBytes: Int = 64 * 1024 * 1024, maxAttachmentBytes: Int = 1 << 30) {
        self.version = version
        startTime = UInt64(Date().timeIntervalSince1970 * 1_000_000)
        self.maxRequestBytes = maxRequestBytes
        self.maxAttachmentBytes = maxAttachmentBytes
    }
}
