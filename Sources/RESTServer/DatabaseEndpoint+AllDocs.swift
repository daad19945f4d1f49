import DocumentModel
import DocumentStore
import Foundation
import HTTPTypes
import Hummingbird

extension DatabaseEndpoint {
    /// `GET/POST /{db}/_all_docs` with `include_docs`, `keys`, `startkey`/`endkey`
    /// (and `start_key`/`end_key`), `inclusive_end`, `limit`, `skip`, `descending`,
    /// `only_conflicts`.
    func allDocs() async throws -> Response {
        try allow(request, "GET,HEAD,POST", request.isRead || request.method == .post)
        var keys: [String]?
        if request.method == .post {
            let body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
            if let value = body["keys"] { keys = try Self.stringKeys(value) }
        }
        if keys == nil, let keysJSON = query["keys"] {
            guard let value = try? JSON.parse(keysJSON) else { throw HTTPFailure.badRequest("keys must be a JSON array") }
            keys = try Self.stringKeys(value)
        }
        let includeDocs = try query.bool("include_docs")
        let renderer = try DocumentRenderer(query: query)
        let onlyConflicts = try query.bool("only_conflicts")
        var rows: [JSON] = []
        let offset = try query.int("skip") ?? 0
        if let keys {
            let listings = try await store.documents(keys, includeBodies: includeDocs)
            for (key, listing) in zip(keys, listings) {
                guard let listing, try await isReadable(docID: key) else {
                    rows.append(["key": .string(key), "error": listing == nil ? "not_found" : "forbidden"])
                    continue
                }
                if onlyConflicts && !listing.tree.hasConflict { continue }
                rows.append(await row(listing, includeDocs: includeDocs, renderer: renderer))
            }
        } else {
            var allDocsQuery = AllDocsQuery()
            allDocsQuery.startKey = try key("startkey", "start_key", "startkey_docid")
            allDocsQuery.endKey = try key("endkey", "end_key", "endkey_docid")
            allDocsQuery.inclusiveEnd = try query.bool("inclusive_end", default: true)
            allDocsQuery.descending = try query.bool("descending")
            allDocsQuery.limit = try query.int("limit")
            allDocsQuery.skip = offset
            allDocsQuery.includeBodies = includeDocs
            allDocsQuery.onlyConflicts = onlyConflicts
            if let access = restrictedAccess { allDocsQuery.channels = Set(access.channels.keys) }
            for listing in try await store.allDocs(allDocsQuery) {
                rows.append(await row(listing, includeDocs: includeDocs, renderer: renderer))
            }
        }
        let showChannels = try query.bool("channels"), showAccess = try query.bool("access")
        if showChannels || showAccess {
            try requireAdminPrincipal("channels and access are shown on the admin port")
            rows = try await withAccess(rows, channels: showChannels, access: showAccess)
        }
        let info = store.info()
        return RESTResponse.json([
            "total_rows": .int(Int64(info.docCount)),
            "offset": .int(Int64(keys == nil ? offset : 0)),
            "update_seq": .int(Int64(info.updateSequence)),
            "rows": .array(rows),
        ])
    }

    private static func stringKeys(_ value: JSON) throws(HTTPFailure) -> [String] {
        guard let array = value.arrayValue else { throw .badRequest("keys must be a JSON array of document IDs") }
        return try array.map { (item: JSON) throws(HTTPFailure) -> String in
            guard let key = item.stringValue else { throw .badRequest("keys must be a JSON array of document IDs") }
            return key
        }
    }

    private func key(_ names: String...) throws(HTTPFailure) -> String? {
        for name in names {
            guard let value = query.json(name) else { continue }
            guard let string = value.stringValue else { throw .badRequest("\(name) must be a string") }
            return string
        }
        return nil
    }

    private func row(_ listing: DocumentListing, includeDocs: Bool, renderer: DocumentRenderer) async -> JSON {
        var value: [String: JSON] = ["rev": .string(listing.winner.description)]
        if listing.deleted { value["deleted"] = true }
        var row: [String: JSON] = ["id": .string(listing.docID), "key": .string(listing.docID), "value": .object(value)]
        if includeDocs {
            let inline = listing.deleted ? [:] : await renderer.inlineData(listing.body, tree: listing.tree, blobs: store.blobs)
            row["doc"] = listing.deleted ? .null : rendered(listing, renderer: renderer, inline: inline)
        }
        return .object(row)
    }

    /// Adds each row's current channels and grants to its `value` (Sync Gateway's
    /// `channels=true&access=true`).
    private func withAccess(_ rows: [JSON], channels: Bool, access: Bool) async throws(HTTPFailure) -> [JSON] {
        let ids = rows.compactMap { $0["id"]?.stringValue }
        let current: [String: RevisionAccess]
        do {
            current = try await store.currentAccess(docIDs: ids)
        } catch {
            throw HTTPFailure(error)
        }
        return rows.map { row in
            guard case .object(var object) = row, let id = object["id"]?.stringValue,
                  case .object(var value)? = object["value"] else { return row }
            let revisionAccess = current[id] ?? RevisionAccess()
            if channels { value["channels"] = .array(revisionAccess.channels.sorted().map { .string($0) }) }
            if access {
                value["access"] = .object(revisionAccess.access.mapValues { .array($0.sorted().map { .string($0) }) })
            }
            object["value"] = .object(value)
            return .object(object)
        }
    }

    /// The winner of a listing as a client reads it.
    func rendered(_ listing: DocumentListing, renderer: DocumentRenderer, inline: [String: [UInt8]] = [:]) -> JSON {
        let node = listing.tree.node(for: listing.winner)
        let revision = Revision(
            docID: listing.docID, revID: listing.winner, deleted: listing.deleted, body: listing.body,
            sequence: node?.sequence ?? listing.sequence)
        return renderer.render(revision, tree: listing.tree, inline: inline, blobs: store.blobs)
    }
}
