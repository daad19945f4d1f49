import Blocking
import AccessControl
import DocumentModel
import DocumentStore
import Hummingbird

/// `POST /{db}/_sync_test` (admin port, Shoal's own): runs a sync function on a sample
/// document as a sample user and answers what it would do, writing nothing.
///
/// Body: `{"doc": {…}, "oldDoc": {…}, "user": "name", "sync": "function…"}`; only `doc`
/// is required. Without `user` the function runs as an administrator (every `require…`
/// passes); without `sync` it is the database's function in effect. The answer is
/// 200 either way: `{"ok": true, "channels", "access", "roles", "expiry"}` or
/// `{"ok": false, "status": 403, "error", "reason"}` for a rejection.
extension DatabaseEndpoint {
    func syncTest() async throws -> Response {
        try allow(request, "POST", request.method == .post)
        try request.requireAdmin("_sync_test is on the admin port")
        let body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
        guard var doc = body["doc"]?.objectValue else { throw HTTPFailure.badRequest("\"doc\" must be a JSON object") }
        if doc["_id"] == nil { doc["_id"] = "sync_test" }
        let oldDoc = body["oldDoc"]
        if let oldDoc, oldDoc != .null, oldDoc.objectValue == nil {
            throw HTTPFailure.badRequest("\"oldDoc\" must be a JSON object or null")
        }
        let function = try await testedFunction(source: body["sync"])
        let user = try await testUser(body["user"])
        let results = await function.run(batch: [(doc: .object(doc), oldDoc: oldDoc == .null ? nil : oldDoc)], user: user)
        switch results.first {
        case .success(let access):
            var answer = access.json.objectValue ?? [:]
            answer["ok"] = true
            if answer["access"] == nil { answer["access"] = [:] }
            if answer["roles"] == nil { answer["roles"] = [:] }
            return RESTResponse.json(.object(answer))
        case .failure(let error):
            let failure = HTTPFailure(error)
            return RESTResponse.json([
                "ok": false, "status": .int(Int64(failure.status.code)), "error": .string(failure.error),
                "reason": .string(failure.reason),
            ])
        case nil:
            throw HTTPFailure(.internalServerError, "internal_error", "the sync function gave no result")
        }
    }

    /// The function given in the body (compiled on a heap of its own: 400 with the
    /// engine's message when it does not compile), else the database's.
    /// Compiles on the blocking pool (a compile blocks its caller).
    private func testedFunction(source: JSON?) async throws(HTTPFailure) -> SyncFunction {
        if let source, source != .null {
            guard let text = source.stringValue else { throw HTTPFailure.badRequest("\"sync\" must be a string") }
            return try await BlockingPool.shared.perform { () throws(HTTPFailure) -> SyncFunction in
                do {
                    return try SyncFunction(source: text, engines: 1)
                } catch {
                    throw HTTPFailure.badRequest("sync function: \(error)")
                }
            }
        }
        if let function = security?.syncFunction { return function }
        return try await BlockingPool.shared.perform { () throws(HTTPFailure) -> SyncFunction in
            do {
                return try SyncFunction(engines: 1)
            } catch {
                throw HTTPFailure(.internalServerError, "internal_error", "\(error)")
            }
        }
    }

    /// The user a test runs as: nil (administrator) or a stored user with its access.
    private func testUser(_ value: JSON?) async throws(HTTPFailure) -> SyncUser? {
        guard let value, value != .null else { return nil }
        guard let name = value.stringValue, !name.isEmpty else { throw HTTPFailure.badRequest("\"user\" must be a user name") }
        guard let security else { throw HTTPFailure.notFound("database '\(store.name)' has no users") }
        do {
            guard let user = try await security.user(named: name) else { throw HTTPFailure.notFound("no user '\(name)'") }
            return try await security.access(for: user).syncUser
        } catch let error as PrincipalError {
            throw HTTPFailure(error)
        } catch let failure as HTTPFailure {
            throw failure
        } catch {
            throw HTTPFailure(.internalServerError, "internal_error", "\(error)")
        }
    }
}
