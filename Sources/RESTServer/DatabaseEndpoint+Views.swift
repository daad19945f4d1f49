import DocumentModel
import DocumentStore
import Foundation
import HTTPTypes
import Hummingbird
import Query

/// CouchDB views: `_design_docs`, `_design/{ddoc}/_view/{view}`, `_view_cleanup`
/// (docs/queries.md). The queries themselves run in the `Query` module.
extension DatabaseEndpoint {
    /// `GET|POST /{db}/_design/{ddoc}/_view/{view}`: map rows or reduced rows, CouchDB's
    /// parameters from the query string and (POST) the JSON body. A public-port user gets
    /// only the rows of documents they may read, and reductions over those rows only.
    /// With `feed=longpoll|continuous|eventsource` it is a live query.
    func view(design: String, name: String) async throws -> Response {
        try allow(request, "GET,HEAD,POST", request.isRead || request.method == .post)
        let engine = try requireViews()
        var body: [String: JSON] = [:]
        if request.method == .post { body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes) }
        let renderer = try DocumentRenderer(query: query)
        let visibility = restrictedAccess.map { access in ViewVisibility { access.canRead($0) } }
        if let feed = try liveFeed(body: body) {
            // A live view: the rows again whenever a commit changes them (docs/queries.md).
            let endpoint = self
            let parameters = query.all
            let requestBody = body
            return try await liveResponse(feed) {
                try await Self.runView(
                    engine, design: design, name: name, parameters: parameters, body: requestBody, visibility: visibility)
                    .json { endpoint.rendered($0, renderer: renderer) }
            }
        }
        let result = try await Self.runView(
            engine, design: design, name: name, parameters: query.all, body: body, visibility: visibility)
        return RESTResponse.json(result.json { rendered($0, renderer: renderer) })
    }

    private static func runView(
        _ engine: ViewEngine, design: String, name: String, parameters: [String: String], body: [String: JSON],
        visibility: ViewVisibility?
    ) async throws(HTTPFailure) -> ViewResult {
        do {
            let viewQuery = try ViewQuery.parse(query: parameters, body: body)
            return try await engine.query(design: design, view: name, query: viewQuery, visibility: visibility)
        } catch {
            throw HTTPFailure(error)
        }
    }

    /// `GET|POST /{db}/_design_docs`: `_all_docs` over the design documents' IDs, with
    /// `include_docs`, `descending`, `limit`, `skip`, `keys` (POST).
    func designDocs() async throws -> Response {
        try allow(request, "GET,HEAD,POST", request.isRead || request.method == .post)
        let includeDocs = try query.bool("include_docs")
        let renderer = try DocumentRenderer(query: query)
        var keys: [String]?
        if request.method == .post {
            let body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
            if let value = body["keys"] {
                guard let array = value.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else {
                    throw HTTPFailure.badRequest("`keys` member must be an array of document IDs")
                }
                keys = array.compactMap(\.stringValue)
            }
        }
        var allDocsQuery = AllDocsQuery()
        allDocsQuery.startKey = DesignDocument.prefix
        allDocsQuery.endKey = "_design0"
        allDocsQuery.inclusiveEnd = false
        allDocsQuery.includeBodies = includeDocs
        var listings: [DocumentListing]
        do {
            listings = try await store.allDocs(allDocsQuery)
        } catch {
            throw HTTPFailure(error)
        }
        if let keys {
            let byID = Dictionary(listings.map { ($0.docID, $0) }, uniquingKeysWith: { a, _ in a })
            listings = keys.compactMap { byID[$0] }
        }
        if try query.bool("descending") { listings.reverse() }
        var visible: [DocumentListing] = []
        for listing in listings where try await isReadable(docID: listing.docID) { visible.append(listing) }
        let skip = try query.int("skip") ?? 0
        let page = visible.dropFirst(skip).prefix(try query.int("limit") ?? Int.max)
        let rows: [JSON] = page.map { listing in
            var row: [String: JSON] = [
                "id": .string(listing.docID), "key": .string(listing.docID),
                "value": ["rev": .string(listing.winner.description)],
            ]
            if includeDocs { row["doc"] = rendered(listing, renderer: renderer) }
            return .object(row)
        }
        return RESTResponse.json([
            "total_rows": .int(Int64(visible.count)),
            "offset": .int(Int64(skip)),
            "rows": .array(rows),
        ])
    }

    /// `POST /{db}/_view_cleanup` (admin port): drops the indexes no design document uses.
    func viewCleanup() async throws -> Response {
        try allow(request, "POST", request.method == .post)
        let engine = try requireViews()
        let dropped = try await Self.cleanup(engine)
        return RESTResponse.json(["ok": true, "dropped": .int(Int64(dropped.count))], status: .accepted)
    }

    private static func cleanup(_ engine: ViewEngine) async throws(HTTPFailure) -> [String] {
        do {
            return try await engine.cleanup()
        } catch {
            throw HTTPFailure(error)
        }
    }

    private func requireViews() throws(HTTPFailure) -> ViewEngine {
        guard let views else { throw HTTPFailure(.notImplemented, "not_implemented", "this server has no view engine") }
        return views
    }
}
