import DocumentModel
import Testing
import TestSupport

/// CouchDB's server-level `/_session`, which browser apps call before they replicate:
/// a login valid in a database gives one cookie for `Path=/` that every database
/// accepts, `GET` tells who is logged in, `DELETE` logs out everywhere.
@Suite struct ServerSessionTests {
    static func start() async throws -> TestNode {
        try await TestNode.start(databases: ["db", "other"]) { configuration in
            configuration.passwordIterations = 1000
            configuration.databases[0].users = ["user1": ["password": "pass", "admin_roles": ["editor"]]]
            configuration.databases[1].users = [
                "user1": ["password": "pass"], "gone": ["password": "pass", "disabled": true],
            ]
        }
    }

    @Test func loginUseAndLogout() async throws {
        let node = try await Self.start()
        defer { Task { await node.stop() } }
        // Anonymous.
        let anonymous = try await node.request("GET", "/_session")
        #expect(anonymous.status == 200)
        #expect(anonymous.json["ok"] == true)
        #expect(anonymous.json["userCtx"] == ["name": .null, "roles": []])

        // Log in (JSON, as PouchDB does): one cookie for every database.
        let login = try await node.request("POST", "/_session", json: ["name": "user1", "password": "pass"])
        #expect(login.status == 200, "\(login)")
        #expect(login.json == ["ok": true, "name": "user1", "roles": ["editor"]])
        let setCookie = try #require(login.headers["set-cookie"])
        #expect(setCookie.contains("Path=/;") && setCookie.contains("HttpOnly"))
        let cookie = try #require(setCookie.split(separator: ";").first.map(String.init))
        for database in ["db", "other"] {
            #expect(try await node.request("GET", "/\(database)/_all_docs", headers: ["Cookie": cookie]).status == 200, "\(database)")
        }
        let session = try await node.request("GET", "/_session", headers: ["Cookie": cookie])
        #expect(session.json["userCtx"] == ["name": "user1", "roles": ["editor"]])
        #expect(session.json["info"]?["authenticated"] == "cookie")
        #expect(try await node.request("GET", "/db/_session", headers: ["Cookie": cookie]).json["userCtx"]?["name"] == "user1")

        // Log out: the cookie is expired and its session gone everywhere.
        let logout = try await node.request("DELETE", "/_session", headers: ["Cookie": cookie])
        #expect(logout.status == 200)
        #expect(logout.headers["set-cookie"]?.contains("Expires=Thu, 01 Jan 1970") == true)
        for database in ["db", "other"] {
            #expect(try await node.request("GET", "/\(database)/_all_docs", headers: ["Cookie": cookie]).status == 401, "\(database)")
        }
    }

    @Test func formLoginBasicAndRefusals() async throws {
        let node = try await Self.start()
        defer { Task { await node.stop() } }
        // An HTML form, as CouchDB accepts it.
        let form = try await node.request(
            "POST", "/_session", raw: Array("name=user1&password=pass".utf8),
            headers: ["Content-Type": "application/x-www-form-urlencoded"])
        #expect(form.status == 200, "\(form)")
        #expect(form.json["name"] == "user1")
        // Basic credentials on GET.
        let basic = try await node.request("GET", "/_session", headers: TestNode.basic("user1", "pass"))
        #expect(basic.json["userCtx"]?["name"] == "user1")
        #expect(basic.json["info"]?["authenticated"] == "default")
        let badBasic = try await node.request("GET", "/_session", headers: TestNode.basic("user1", "nope"))
        #expect(badBasic.status == 401)
        // Wrong password, unknown user, missing fields: 401; a disabled user: 403.
        for body: JSON in [["name": "user1", "password": "nope"], ["name": "nobody", "password": "pass"], ["name": "user1"]] {
            let refused = try await node.request("POST", "/_session", json: body)
            #expect(refused.status == 401, "\(body): \(refused)")
            #expect(refused.headers["www-authenticate"] == "Basic realm=\"Couchbase Sync Gateway\"")
        }
        let disabled = try await node.request("POST", "/_session", json: ["name": "gone", "password": "pass"])
        #expect(disabled.status == 403, "\(disabled)")
        #expect(try await node.request("PUT", "/_session", json: [:]).status == 405)
        // The admin port is the administrator.
        #expect(try await node.request("GET", "/_session", admin: true).json["userCtx"]?["roles"] == ["_admin"])
    }
}
