import DocumentModel
import DocumentStore
import Foundation
import Hummingbird
import Query

/// Mango: `POST /{db}/_find`, `GET|POST /{db}/_index`, `DELETE /{db}/_index/{ddoc}/json/{name}`,
/// `POST /{db}/_explain` (docs/queries.md).
extension DatabaseEndpoint {
    /// `POST /{db}/_find`: the documents matching the selector (only those the user may
    /// read on the public port), CouchDB's answer shape. With `feed=longpoll|continuous|
    /// eventsource` it is a live query (`GET /{db}/_find?feed=eventsource&query={…}` for a
    /// browser's EventSource, which cannot POST).
    func find() async throws -> Response {
        let body: [String: JSON]
        if request.isRead, query["feed"] != nil {
            guard let text = query["query"], let object = (try? JSON.parse(text))?.objectValue else {
                throw HTTPFailure.badRequest("A live GET _find takes the query as a JSON object in ?query=")
            }
            body = object
        } else {
            try allow(request, "POST", request.method == .post)
            body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
        }
        let query = try await Self.mango { () throws(MangoError) in try MangoQuery(body) }
        let endpoint = self
        if let feed = try liveFeed(body: body) {
            return try await liveResponse(feed) { try await endpoint.findAnswer(query, update: true) }
        }
        return RESTResponse.json(try await findAnswer(query, update: body["update"]?.boolValue ?? true))
    }

    /// The answer of one run of `query`.
    func findAnswer(_ query: MangoQuery, update: Bool) async throws -> JSON {
        let started = ContinuousClock.now
        let endpoint = self
        let result = try await Self.mango {
            try await MangoEngine(store: store).find(query, update: update) { listing in
                (try? await endpoint.isReadable(docID: listing.docID)) ?? false
            }
        }
        var renderer = DocumentRenderer()
        renderer.conflicts = query.conflicts
        let docs: [JSON] = result.documents.map { listing in
            guard case .object(let document) = rendered(listing, renderer: renderer) else { return .null }
            return .object(query.project(document))
        }
        var answer: [String: JSON] = ["docs": .array(docs), "bookmark": .string(result.bookmark)]
        if let warning = result.warning { answer["warning"] = .string(warning) }
        if query.executionStats {
            let elapsed = ContinuousClock.now - started
            answer["execution_stats"] = [
                "total_keys_examined": .int(Int64(result.keysExamined)),
                "total_docs_examined": .int(Int64(result.docsExamined)),
                "total_quorum_docs_examined": 0,
                "results_returned": .int(Int64(docs.count)),
                "execution_time_ms": .double(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15),
            ]
        }
        return .object(answer)
    }

    /// `POST /{db}/_explain`: the index and range `_find` would use.
    func explain() async throws -> Response {
        try allow(request, "POST", request.method == .post)
        let body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
        let query = try await Self.mango { () throws(MangoError) in try MangoQuery(body) }
        let explanation = try await Self.mango { try await MangoEngine(store: store).explain(query) }
        return RESTResponse.json(explanation)
    }

    /// `GET /{db}/_index` lists the indexes; `POST` creates one (admin);
    /// `DELETE /{db}/_index/{ddoc}/json/{name}` removes one (admin).
    func index(path: ArraySlice<String>) async throws -> Response {
        let engine = MangoEngine(store: store)
        if path.isEmpty {
            switch request.method {
            case .get, .head:
                let indexes = try await Self.mango { try await engine.indexes() }
                let special: JSON = ["ddoc": .null, "name": "_all_docs", "type": "special", "def": ["fields": [["_id": "asc"]]]]
                return RESTResponse.json([
                    "total_rows": .int(Int64(indexes.count + 1)),
                    "indexes": .array([special] + indexes.map(\.listingJSON)),
                ])
            case .post:
                try requireAdminPrincipal("Indexes are created on the admin port")
                let body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
                let definition = try await Self.mango { () throws(MangoError) in try MangoIndexDefinition(request: body) }
                let created = try await Self.mango { try await engine.create(definition) }
                return RESTResponse.json([
                    "result": created ? "created" : "exists", "id": .string(definition.ddoc), "name": .string(definition.name),
                ])
            default:
                throw HTTPFailure.methodNotAllowed("GET,HEAD,POST")
            }
        }
        guard request.method == .delete else { throw HTTPFailure.methodNotAllowed("DELETE") }
        try requireAdminPrincipal("Indexes are deleted on the admin port")
        // {ddoc}/json/{name}, where {ddoc} may be given with or without `_design/`.
        var parts = Array(path)
        if parts.first == "_design", parts.count > 1 { parts = ["_design/" + parts[1]] + parts.dropFirst(2) }
        guard parts.count == 3, parts[1] == "json" else {
            throw HTTPFailure.notFound("Index path must be /{db}/_index/{ddoc}/json/{name}")
        }
        let ddoc = parts[0].hasPrefix("_design/") ? parts[0] : "_design/" + parts[0]
        guard try await Self.mango({ try await engine.delete(ddoc: ddoc, name: parts[2]) }) else {
            throw HTTPFailure(.notFound, "not_found", "Index not found")
        }
        return RESTResponse.json(["ok": true])
    }

    /// Runs Mango work, turning its errors into CouchDB's answers.
    static func mango<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as MangoError {
            throw HTTPFailure(.init(code: error.status), error.error, error.reason)
        } catch let error as StoreError {
            throw HTTPFailure(error)
        }
    }
}
