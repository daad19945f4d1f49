import DocumentModel
import DocumentStore
import Foundation
import HTTPTypes
import Hummingbird

extension DatabaseEndpoint {
    /// `GET/HEAD/PUT/DELETE /{db}/{id}`.
    func document(id: String) async throws -> Response {
        switch request.method {
        case .get, .head: return try await getDocument(id: id)
        case .put: return try await putDocument(id: id)
        case .delete: return try await deleteDocument(id: id)
        default: throw HTTPFailure.methodNotAllowed("GET,HEAD,PUT,DELETE")
        }
    }

    /// The revision named by `?rev=` or `If-Match`, if any.
    func requestedRev() throws(HTTPFailure) -> String? {
        if let rev = query["rev"] { return rev }
        if let match = request.headers[.ifMatch] { return match.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        return nil
    }

    func parseRev(_ string: String) throws(HTTPFailure) -> RevID {
        guard let rev = RevID(string) else { throw .badRequest("Invalid revision ID: \(string)") }
        return rev
    }

    private func getDocument(id: String) async throws -> Response {
        var renderer = try DocumentRenderer(query: query)
        let latest = try query.bool("latest")
        if let openRevs = query["open_revs"] {
            return try await getOpenRevs(id: id, spec: openRevs, latest: latest, renderer: renderer)
        }
        // One document: `_cv` unless `show_cv=false` (Sync Gateway 4 always shows it here).
        if query["show_cv"] == nil { renderer.currentVersion = true }
        var rev = try requestedRev().map(parseRev)
        if latest, let requested = rev, let metadata = try await store.metadata(id) {
            rev = metadata.tree.leaves(descendingFrom: requested).first ?? requested
        }
        try await requireReadable(docID: id, rev: rev)
        let (metadata, revision): (DocumentMetadata, Revision)
        do {
            (metadata, revision) = try await store.revision(id, rev: rev)
        } catch {
            throw HTTPFailure(error)
        }
        let json = await renderer.render(revision, tree: metadata.tree, blobs: store.blobs)
        return RESTResponse.json(json, headers: [.eTag: "\"\(revision.revID)\""])
    }

    /// `open_revs=all` or `open_revs=["1-a",…]`: a JSON array of `{"ok": doc}` and
    /// `{"missing": rev}` entries.
    private func getOpenRevs(id: String, spec: String, latest: Bool, renderer: DocumentRenderer) async throws -> Response {
        try await requireReadable(docID: id)
        var wanted: [RevID]?
        if spec != "all" {
            guard let array = (try? JSON.parse(spec))?.arrayValue else {
                throw HTTPFailure.badRequest("open_revs must be \"all\" or a JSON array of revision IDs")
            }
            wanted = try DocumentRenderer.revList(array.map { $0.stringValue ?? "" }, name: "open_revs")
        }
        if latest, let requested = wanted, let metadata = try await store.metadata(id) {
            var expanded: [RevID] = []
            for rev in requested {
                for leaf in metadata.tree.leaves(descendingFrom: rev) where !expanded.contains(leaf) { expanded.append(leaf) }
                if !metadata.tree.contains(rev) { expanded.append(rev) }
            }
            wanted = expanded
        }
        guard let (metadata, lookups) = try await store.revisions(id, revs: wanted) else {
            if let wanted { return RESTResponse.json(.array(wanted.map { ["missing": .string($0.description)] })) }
            throw HTTPFailure.notFound()
        }
        var entries: [JSON] = []
        for lookup in lookups {
            switch lookup {
            case .found(let revision): entries.append(["ok": await renderer.render(revision, tree: metadata.tree, blobs: store.blobs)])
            case .missing(let rev): entries.append(["missing": .string(rev.description)])
            }
        }
        return RESTResponse.json(.array(entries))
    }

    private func putDocument(id: String) async throws -> Response {
        let body = try await request.jsonObjectBody(limit: documentLimit)
        let newEdits = try query.bool("new_edits", default: true)
        let update = try DocumentUpdateParser.parse(body, docID: id, explicitRev: try requestedRev(), newEdits: newEdits)
        let result = try await save(update)
        return RESTResponse.written(id: id, rev: result.revID.description, cv: result.version?.current)
    }

    private func deleteDocument(id: String) async throws -> Response {
        guard let revString = try requestedRev() else {
            // CouchDB: deleting without naming the revision is a conflict.
            guard try await store.metadata(id) != nil else { throw HTTPFailure.notFound() }
            throw HTTPFailure.conflict
        }
        let update = DocumentUpdate(docID: id, body: [:], deleted: true, mode: .edit(parent: try parseRev(revString)))
        let result = try await save(update)
        return RESTResponse.written(id: id, rev: result.revID.description, cv: result.version?.current, status: .ok)
    }
}
