import DocumentModel
import RESTServer
import Testing
import TestSupport

/// CORS as Sync Gateway configures it (`origin`, `loginorigin`, `headers`, `maxAge`):
/// preflights on every route without credentials, the allowed origin echoed, credentials
/// only for origins listed by name (login origins on `_session`), `Vary: Origin`, and
/// nothing at all when CORS is not configured.
@Suite struct CORSTests {
    static let app = "https://app.example"
    static let login = "https://login.example"

    static func start(_ policy: CORSPolicy?) async throws -> TestNode {
        try await TestNode.start { configuration in
            configuration.passwordIterations = 1000
            configuration.cors = policy
            configuration.databases[0].users = ["user1": ["password": "pass", "admin_channels": ["*"]]]
        }
    }

    static let policy = CORSPolicy(
        origins: [app, "*"], loginOrigins: [login], headers: ["Content-Type", "Authorization"], maxAge: 600)

    /// A browser's preflight for `method` on `path` from `origin`.
    static func preflight(_ node: TestNode, _ path: String, origin: String, method: String = "PUT", admin: Bool = false) async throws -> HTTPResult {
        try await node.request("OPTIONS", path, admin: admin, headers: [
            "Origin": origin, "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "content-type, authorization",
        ])
    }

    @Test func preflightsOnEveryRoute() async throws {
        let node = try await Self.start(Self.policy)
        defer { Task { await node.stop() } }
        for path in ["/", "/db/", "/db/doc1", "/db/_bulk_docs", "/db/_changes?feed=longpoll", "/db/_local/x", "/db/doc1/att.txt", "/nodb/x"] {
            let answer = try await Self.preflight(node, path, origin: Self.app)
            #expect(answer.status == 204, "\(path): \(answer)")
            #expect(answer.headers["access-control-allow-origin"] == Self.app, "\(path)")
            #expect(answer.headers["access-control-allow-credentials"] == "true", "\(path)")
            #expect(answer.headers["access-control-allow-methods"] == "DELETE, GET, HEAD, OPTIONS, POST, PUT", "\(path)")
            #expect(answer.headers["access-control-allow-headers"] == "Content-Type, Authorization", "\(path)")
            #expect(answer.headers["access-control-max-age"] == "600", "\(path)")
            #expect(answer.headers["vary"] == "Origin", "\(path)")
        }
        // Any other origin is allowed through `*`, without credentials.
        let other = try await Self.preflight(node, "/db/doc1", origin: "https://other.example")
        #expect(other.status == 204)
        #expect(other.headers["access-control-allow-origin"] == "https://other.example")
        #expect(other.headers["access-control-allow-credentials"] == nil)
        // The admin port has no CORS unless configured.
        let admin = try await Self.preflight(node, "/db/doc1", origin: Self.app, admin: true)
        #expect(admin.status == 405, "\(admin)")
        #expect(admin.headers["access-control-allow-origin"] == nil)
    }

    @Test func actualRequestsCarryTheHeaders() async throws {
        let node = try await Self.start(Self.policy)
        defer { Task { await node.stop() } }
        let user1 = TestNode.basic("user1", "pass")
        let put = try await node.request("PUT", "/db/doc1", json: ["a": 1], headers: user1.merging(["Origin": Self.app]) { $1 })
        #expect(put.status == 201)
        #expect(put.headers["access-control-allow-origin"] == Self.app)
        #expect(put.headers["access-control-allow-credentials"] == "true")
        #expect(put.headers["vary"] == "Origin")
        // Errors too (a browser app must be able to read its 401).
        let refused = try await node.request("GET", "/db/doc1", headers: ["Origin": "https://other.example"])
        #expect(refused.status == 401)
        #expect(refused.headers["access-control-allow-origin"] == "https://other.example")
        #expect(refused.headers["access-control-allow-credentials"] == nil)
        // Without an Origin, only Vary.
        let plain = try await node.request("GET", "/db/doc1", headers: user1)
        #expect(plain.status == 200)
        #expect(plain.headers["access-control-allow-origin"] == nil)
        #expect(plain.headers["vary"] == "Origin")
    }

    @Test func loginOriginsGetCredentialsOnSession() async throws {
        let node = try await Self.start(CORSPolicy(origins: [Self.app], loginOrigins: [Self.login]))
        defer { Task { await node.stop() } }
        for path in ["/_session", "/db/_session"] {
            let login = try await node.request(
                "POST", path, json: ["name": "user1", "password": "pass"], headers: ["Origin": Self.login])
            #expect(login.status == 200, "\(path): \(login)")
            #expect(login.headers["access-control-allow-origin"] == Self.login, "\(path)")
            #expect(login.headers["access-control-allow-credentials"] == "true", "\(path)")
            #expect(login.headers["set-cookie"]?.hasPrefix("SyncGatewaySession=") == true, "\(path)")
            // An origin that may only read gets no credentials on _session.
            let app = try await Self.preflight(node, path, origin: Self.app, method: "POST")
            #expect(app.headers["access-control-allow-origin"] == Self.app, "\(path)")
            #expect(app.headers["access-control-allow-credentials"] == nil, "\(path)")
        }
        // An origin listed nowhere gets nothing (no `*` here).
        let stranger = try await Self.preflight(node, "/db/doc1", origin: "https://evil.example")
        #expect(stranger.status == 204)
        #expect(stranger.headers["access-control-allow-origin"] == nil)
        #expect(stranger.headers["access-control-allow-methods"] == nil)
    }

    @Test func adminPortOnlyWhenConfigured() async throws {
        var policy = CORSPolicy(origins: [Self.app])
        policy.onAdminPort = true
        let node = try await Self.start(policy)
        defer { Task { await node.stop() } }
        let admin = try await Self.preflight(node, "/db/_user/user1", origin: Self.app, admin: true)
        #expect(admin.status == 204)
        #expect(admin.headers["access-control-allow-origin"] == Self.app)
        #expect(admin.headers["access-control-allow-headers"] == "Authorization, Content-Type")
        #expect(admin.headers["access-control-max-age"] == nil)
    }

    /// A page of another origin cannot write through the admin port (CSRF with a
    /// `text/plain` body, which needs no preflight); the admin UI's own origin, programs
    /// without `Origin`, and reads still can.
    @Test func adminPortRefusesWritesFromOtherOrigins() async throws {
        let node = try await Self.start(nil)
        defer { Task { await node.stop() } }
        func createUser(_ name: String, origin: String?) async throws -> HTTPResult {
            var headers = ["Content-Type": "text/plain"]
            if let origin { headers["Origin"] = origin }
            return try await node.request(
                "PUT", "/db/_user/\(name)", raw: Array(#"{"password": "pass12345"}"#.utf8), headers: headers, admin: true)
        }
        let forged = try await createUser("mallory", origin: "https://evil.example")
        #expect(forged.status == 403)
        #expect(forged.text.contains("another origin"))
        #expect(try await node.request("GET", "/db/_user/mallory", admin: true).status == 404)
        #expect(try await createUser("ui", origin: "http://127.0.0.1:\(node.ports.adminPort)").status == 201)
        #expect(try await createUser("curl", origin: nil).status == 201)
        #expect(try await node.request("GET", "/db/_user/ui", admin: true, headers: ["Origin": "https://evil.example"]).status == 200)
        // An origin the CORS config allows on the admin port may write.
        let other = try await Self.start(CORSPolicy(origins: [Self.app], onAdminPort: true))
        defer { Task { await other.stop() } }
        let allowed = try await other.request(
            "PUT", "/db/_user/app", raw: Array(#"{"password": "pass12345"}"#.utf8),
            headers: ["Content-Type": "application/json", "Origin": Self.app], admin: true)
        #expect(allowed.status == 201)
    }

    @Test func noCORSByDefault() async throws {
        let node = try await Self.start(nil)
        defer { Task { await node.stop() } }
        // Not answered as a preflight: the route's own answer (here: 401, no credentials).
        let preflight = try await Self.preflight(node, "/db/", origin: Self.app)
        #expect(preflight.status == 401)
        #expect(preflight.headers["access-control-allow-origin"] == nil)
        #expect(try await Self.preflight(node, "/", origin: Self.app).status == 405)
        let get = try await node.request("GET", "/", headers: ["Origin": Self.app])
        #expect(get.status == 200)
        #expect(get.headers["access-control-allow-origin"] == nil && get.headers["vary"] == nil)
    }
}
