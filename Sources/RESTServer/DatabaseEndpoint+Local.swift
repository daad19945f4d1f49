import AccessControl
import DocumentModel
import DocumentStore
import Foundation
import HTTPTypes
import Hummingbird

extension DatabaseEndpoint {
    /// `GET/PUT/DELETE /{db}/_local/{id}`: documents that are never replicated.
    func local(id: String) async throws -> Response {
        do {
            switch request.method {
            case .get, .head:
                guard let doc = try await store.localDocument(id) else { throw HTTPFailure.notFound() }
                var body = doc.body
                body["_id"] = .string("_local/\(id)")
                body["_rev"] = .string(doc.rev)
                return RESTResponse.json(.object(body))
            case .put:
                var body = try await request.jsonObjectBody(limit: documentLimit)
                let bodyRev = body.removeValue(forKey: "_rev")?.stringValue
                body.removeValue(forKey: "_id")
                let rev = try requestedRev() ?? bodyRev
                let newRev = try await store.putLocal(id, body: body, rev: rev)
                return RESTResponse.written(id: "_local/\(id)", rev: newRev)
            case .delete:
                try await store.deleteLocal(id, rev: try requestedRev())
                return RESTResponse.json(["id": .string("_local/\(id)"), "ok": true, "rev": "0-0"])
            default:
                throw HTTPFailure.methodNotAllowed("GET,HEAD,PUT,DELETE")
            }
        } catch let error as StoreError {
            throw HTTPFailure(error)
        }
    }

    /// `POST /{db}/_compact`: drops unneeded bodies and unreferenced attachments.
    func compact() async throws -> Response {
        try allow(request, "POST", request.method == .post)
        do {
            let report = try await store.compact()
            return RESTResponse.json([
                "ok": true, "revs": .int(Int64(report.bodiesRemoved)), "attachments": .int(Int64(report.blobsRemoved)),
            ])
        } catch {
            throw HTTPFailure(error)
        }
    }

    /// `POST /{db}/_resync`: recomputes every document's channels and grants with the
    /// sync function in effect (done by itself at start when the function changed, and
    /// after a deploy through the config API), answering when it is done.
    /// `GET /{db}/_resync`: the latest resync's progress (Sync Gateway's shape).
    func resync() async throws -> Response {
        try allow(request, "GET,HEAD,POST", request.method == .post || request.isRead)
        guard let security else { throw HTTPFailure(.notFound, "not_found", "this database has no security model") }
        if request.isRead { return RESTResponse.json(Self.resyncJSON(security.resyncStatus)) }
        do {
            let result = try await security.resync()
            return RESTResponse.json([
                "ok": true, "docs_processed": .int(Int64(result.processed)), "docs_changed": .int(Int64(result.changed)),
            ])
        } catch {
            throw HTTPFailure(error)
        }
    }

    /// A resync's status as `GET /{db}/_resync` answers it (and the admin UI's feed):
    /// Sync Gateway's `status`, `start_time`, `last_error`, `docs_changed` and
    /// `docs_processed`, plus Shoal's `docs_total`, `run`, `trigger` and `end_time`.
    /// No resync since the node started: `status` `stopped`, zero counts.
    static func resyncJSON(_ status: ResyncStatus?) -> JSON {
        guard let status else {
            return ["status": "stopped", "docs_changed": 0, "docs_processed": 0, "docs_total": 0, "last_error": "", "run": 0]
        }
        var object: [String: JSON] = [
            "status": .string(status.state.rawValue), "run": .int(Int64(status.run)), "trigger": .string(status.trigger),
            "start_time": .string(preciseTime(status.startTime)), "last_error": .string(status.error ?? ""),
            "docs_changed": .int(Int64(status.changed)), "docs_processed": .int(Int64(status.processed)),
            "docs_total": .int(Int64(status.total)),
        ]
        if let end = status.endTime { object["end_time"] = .string(preciseTime(end)) }
        return .object(object)
    }

    /// ISO 8601 with milliseconds (a resync of a small database takes less than a second).
    private static func preciseTime(_ date: Date) -> String {
        ISO8601Time.string(date, milliseconds: true)
    }

    /// `POST /{db}/_purge`: `{"doc": ["rev", …] | ["*"]}` removes revisions (or the
    /// whole document) as if they had never existed.
    func purge() async throws -> Response {
        try allow(request, "POST", request.method == .post)
        let body = try await request.jsonObjectBody(limit: configuration.maxRequestBytes)
        var asked: [(docID: String, revs: [RevID]?)] = []
        for (docID, revs) in body {
            guard let array = revs.arrayValue?.compactMap(\.stringValue) else {
                throw HTTPFailure.badRequest("Revisions of \(docID) must be an array of strings")
            }
            if array.contains("*") {
                asked.append((docID, nil))
            } else {
                asked.append((docID, try DocumentRenderer.revList(array, name: docID)))
            }
        }
        let purged: [(docID: String, revs: [RevID])]
        do {
            purged = try await store.purge(asked)
        } catch {
            throw HTTPFailure(error)
        }
        var result: [String: JSON] = [:]
        for (docID, revs) in purged { result[docID] = .array(revs.map { .string($0.description) }) }
        return RESTResponse.json(["purge_seq": .int(Int64(store.info().purgeSequence)), "purged": .object(result)])
    }
}
