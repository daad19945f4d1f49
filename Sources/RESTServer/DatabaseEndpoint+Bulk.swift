import DocumentModel
import DocumentStore
import Foundation
import HTTPTypes
import Hummingbird

extension DatabaseEndpoint {
    /// `POST /{db}/_bulk_docs`: every document succeeds or fails on its own; the
    /// response lists each one's `{"id","rev"}` or `{"id","error","reason","status"}`.
    func bulkDocs() async throws -> Response {
        try allow(request, "POST", request.method == .post)
        var body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
        guard case .array(var docs)? = body.removeValue(forKey: "docs") else {
            throw HTTPFailure.badRequest("Missing \"docs\" array")
        }
        let newEditsValue = body["new_edits"]
        guard newEditsValue == nil || newEditsValue?.boolValue != nil else {
            throw HTTPFailure.badRequest("new_edits must be a boolean")
        }
        let newEdits = newEditsValue?.boolValue ?? true
        var slots: [Result<DocumentUpdate, HTTPFailure>] = []
        slots.reserveCapacity(docs.count)
        var ids: [String?] = []
        ids.reserveCapacity(docs.count)
        for index in docs.indices {
            // Each document is moved out of the array: taking its `_id`, `_rev`… out then
            // changes the only copy of its dictionary instead of copying it.
            let doc = docs[index]
            docs[index] = .null
            let givenID = doc["_id"]
            ids.append(givenID?.stringValue)
            do throws(HTTPFailure) {
                slots.append(.success(try Self.bulkUpdate(consume doc, givenID: givenID, newEdits: newEdits)))
            } catch {
                slots.append(.failure(error))
            }
        }
        let updates = slots.compactMap { try? $0.get() }
        let saved: [Result<WriteResult, StoreError>]
        do {
            saved = try await store.save(batch: updates, author: principal.author, origin: localOrigin)
        } catch {
            throw HTTPFailure(error)
        }
        var savedIterator = saved.makeIterator()
        var results: [JSON] = []
        results.reserveCapacity(slots.count)
        for (index, slot) in slots.enumerated() {
            let id = ids[index]
            switch slot {
            case .failure(let failure):
                results.append(Self.errorEntry(id: id, failure))
            case .success(let update):
                switch savedIterator.next()! {
                case .success(let result):
                    var entry: [String: JSON] = ["id": .string(update.docID), "rev": .string(result.revID.description)]
                    if let cv = result.version?.current { entry["cv"] = .string(cv.description) }
                    results.append(.object(entry))
                case .failure(let error):
                    results.append(Self.errorEntry(id: update.docID, HTTPFailure(error)))
                }
            }
        }
        return RESTResponse.json(.array(results), status: .created)
    }

    /// One document of a `_bulk_docs` request (with its `_id` member, already read) as an
    /// update, its ID generated if it has none.
    static func bulkUpdate(_ doc: consuming JSON, givenID: JSON?, newEdits: Bool) throws(HTTPFailure) -> DocumentUpdate {
        guard case .object(let object) = consume doc else { throw .badRequest("Document must be a JSON object") }
        if givenID != nil && givenID?.stringValue == nil { throw .badRequest("Invalid _id: must be a string") }
        if !newEdits && givenID == nil { throw .badRequest("new_edits=false requires _id") }
        let id = givenID?.stringValue ?? DatabaseEndpoint.generateDocID()
        return try DocumentUpdateParser.parse(object, docID: id, explicitRev: nil, newEdits: newEdits)
    }

    static func errorEntry(id: String?, _ failure: HTTPFailure) -> JSON {
        var entry: [String: JSON] = [
            "error": .string(failure.error), "reason": .string(failure.reason), "status": .int(Int64(failure.status.code)),
        ]
        if let id { entry["id"] = .string(id) }
        return .object(entry)
    }

    /// `POST /{db}/_bulk_get` (`revs`, `latest`, `attachments`): CouchDB's JSON form,
    /// `{"results":[{"id":…,"docs":[{"ok":doc}|{"error":{…}}]}]}`.
    func bulkGet() async throws -> Response {
        try allow(request, "POST", request.method == .post)
        let body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
        guard let docs = body["docs"]?.arrayValue else { throw HTTPFailure.badRequest("Missing \"docs\" array") }
        let latest = try query.bool("latest")
        var results: [JSON] = []
        for item in docs {
            guard let id = item["id"]?.stringValue else {
                results.append(["id": .null, "docs": [["error": ["error": "bad_request", "reason": "missing id"]]]])
                continue
            }
            var renderer = try DocumentRenderer(query: query)
            if let since = item["atts_since"]?.arrayValue {
                renderer.attachmentsSince = since.compactMap { $0.stringValue.flatMap(RevID.init) }
            }
            var wanted: [RevID]?
            if let revString = item["rev"]?.stringValue {
                guard let rev = RevID(revString) else {
                    results.append(["id": .string(id), "docs": [Self.bulkGetError(id: id, rev: revString, .badRequest("Invalid rev"))]])
                    continue
                }
                wanted = [rev]
            }
            do {
                try await requireReadable(docID: id, rev: wanted?.first)
            } catch {
                results.append(["id": .string(id), "docs": [Self.bulkGetError(id: id, rev: wanted?.first?.description, error)]])
                continue
            }
            // Without a rev, the current (winning) revision, as CouchDB answers.
            guard let (metadata, found) = try await store.revisions(id, revs: wanted) else {
                results.append(["id": .string(id), "docs": [Self.bulkGetError(id: id, rev: wanted?.first?.description, .notFound())]])
                continue
            }
            var lookups = found
            if wanted == nil {
                lookups = lookups.filter { if case .found(let revision) = $0 { revision.revID == metadata.winner } else { false } }
            }
            var entries: [JSON] = []
            var seen = Set<RevID>()
            for lookup in lookups {
                switch lookup {
                case .missing(let rev):
                    entries.append(Self.bulkGetError(id: id, rev: rev.description, .notFound()))
                case .found(var revision):
                    if latest, let leaf = metadata.tree.leaves(descendingFrom: revision.revID).first, leaf != revision.revID,
                       case .found(let newer)? = try await store.revisions(id, revs: [leaf])?.1.first {
                        revision = newer
                    }
                    guard seen.insert(revision.revID).inserted else { continue }
                    entries.append(["ok": await renderer.render(revision, tree: metadata.tree, blobs: store.blobs)])
                }
            }
            results.append(["id": .string(id), "docs": .array(entries)])
        }
        return RESTResponse.json(["results": .array(results)])
    }

    private static func bulkGetError(id: String, rev: String?, _ failure: HTTPFailure) -> JSON {
        ["error": [
            "id": .string(id), "rev": rev.map { .string($0) } ?? .null,
            "error": .string(failure.error), "reason": .string(failure.reason),
        ]]
    }

    /// `POST /{db}/_revs_diff`: `{"doc": ["rev", …]}` → the missing ones and their
    /// possible ancestors.
    func revsDiff() async throws -> Response {
        try allow(request, "POST", request.method == .post)
        let body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
        var asked: [(docID: String, revs: [RevID])] = []
        for (docID, revs) in body {
            guard let array = revs.arrayValue else { throw HTTPFailure.badRequest("Revisions of \(docID) must be an array") }
            asked.append((docID, try DocumentRenderer.revList(array.map { $0.stringValue ?? "" }, name: docID)))
        }
        let entries: [RevsDiffEntry]
        do {
            entries = try await store.revsDiff(asked)
        } catch {
            throw HTTPFailure(error)
        }
        var result: [String: JSON] = [:]
        for entry in entries {
            var value: [String: JSON] = ["missing": .array(entry.missing.map { .string($0.description) })]
            if !entry.possibleAncestors.isEmpty {
                value["possible_ancestors"] = .array(entry.possibleAncestors.map { .string($0.description) })
            }
            result[entry.docID] = .object(value)
        }
        return RESTResponse.json(.object(result))
    }
}
