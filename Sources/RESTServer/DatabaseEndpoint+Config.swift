import AccessControl
import DocumentModel
import DocumentStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The database config API (admin port): `GET|PUT /{db}/_config`, `GET|PUT|DELETE
/// /{db}/_config/sync` (the body is the JavaScript), `GET|PUT /{db}/_config/conflicts`,
/// and `POST /{db}/_sync_test`, which runs a sync function on a sample document and
/// user and writes nothing (docs/rest-api.md).
extension DatabaseEndpoint {
    func config(path: ArraySlice<String>, configurator: (any DatabaseConfigurator)?) async throws -> Response {
        try request.requireAdmin("The database config is on the admin port")
        guard let configurator, let current = configurator.databaseConfig(database: store.name) else {
            throw HTTPFailure(.notImplemented, "not_implemented", "this server has no config API")
        }
        switch (path.first, request.method) {
        case (nil, .get), (nil, .head):
            return RESTResponse.json(current)
        case (nil, .put), (nil, .post):
            let body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
            let changeable: Set<String> = ["sync", "conflicts"]
            let fixed = body.keys.filter { !changeable.contains($0) && body[$0] != current[$0] }.sorted()
            guard fixed.isEmpty else {
                throw HTTPFailure.badRequest("only \"sync\" and \"conflicts\" can change while the node runs (not \(fixed.joined(separator: ", ")))")
            }
            var answer: [String: JSON] = ["ok": true]
            if let sync = body["sync"], sync != current["sync"] {
                guard sync == .null || sync.stringValue != nil else { throw HTTPFailure.badRequest("\"sync\" must be a string or null") }
                answer["sync"] = try await change { () async throws(ConfigChangeError) in
                    try await configurator.setSyncFunction(database: store.name, source: sync.stringValue)
                }
            }
            if let conflicts = body["conflicts"], conflicts != current["conflicts"] {
                answer["conflicts"] = try await change { () async throws(ConfigChangeError) in
                    try await configurator.setConflictPolicies(database: store.name, json: conflicts)
                }
            }
            return RESTResponse.json(.object(answer), status: .created)
        case ("sync", _) where path.count == 1:
            return try await syncConfig(current: current, configurator: configurator)
        case ("conflicts", .get), ("conflicts", .head):
            return RESTResponse.json(current["conflicts"] ?? .null)
        case ("conflicts", .put):
            let body = try await request.jsonBody(limit: configuration.maxRequestBytes)
            let answer = try await change { () async throws(ConfigChangeError) in
                try await configurator.setConflictPolicies(database: store.name, json: body)
            }
            return RESTResponse.json(answer, status: .created)
        case ("sync", _), ("conflicts", _), (nil, _):
            throw HTTPFailure.methodNotAllowed(path.first == "sync" ? "GET,HEAD,PUT,DELETE" : "GET,HEAD,PUT")
        default:
            throw HTTPFailure.notFound("unknown config section")
        }
    }

    /// `GET` answers the function as `application/javascript`; `PUT` takes it as the
    /// body (any content type, or a JSON string); `DELETE` goes back to the file's.
    private func syncConfig(current: JSON, configurator: any DatabaseConfigurator) async throws -> Response {
        switch request.method {
        case .get, .head:
            let source = current["sync"]?.stringValue ?? SyncFunction.defaultSource
            return Response(
                status: .ok, headers: [.contentType: "application/javascript"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: source)))
        case .put, .delete:
            var source: String?
            if request.method == .put {
                let buffer = try await request.collectBody(limit: configuration.maxRequestBytes)
                var text = String(buffer: buffer)
                if request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true {
                    guard let string = (try? JSON.parse(Array(text.utf8)))?.stringValue else {
                        throw HTTPFailure.badRequest("a JSON body must be a string holding the function")
                    }
                    text = string
                }
                guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                    throw HTTPFailure.badRequest("the body must be the sync function's JavaScript")
                }
                source = text
            }
            let answer = try await change { () async throws(ConfigChangeError) in
                try await configurator.setSyncFunction(database: store.name, source: source)
            }
            return RESTResponse.json(answer, status: request.method == .put ? .created : .ok)
        default:
            throw HTTPFailure.methodNotAllowed("GET,HEAD,PUT,DELETE")
        }
    }

    private func change(_ work: () async throws(ConfigChangeError) -> JSON) async throws(HTTPFailure) -> JSON {
        do {
            return try await work()
        } catch {
            throw HTTPFailure(status: error.status, reason: error.reason)
        }
    }
}
