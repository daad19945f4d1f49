import DocumentModel
import DocumentStore
import HTTPTypes
import Hummingbird

extension DatabaseEndpoint {
    /// `GET /{db}/_conflicts` (admin port): the documents with more than one live
    /// leaf, each with its winner, its other live leaves, the policy that applies
    /// and, when the node lacks it, the merge base it waits for; plus what the
    /// node's resolver has done. `limit` caps the rows (default 1000).
    func conflicts(monitor: ConflictMonitor?) async throws -> Response {
        try allow(request, "GET,HEAD", request.isRead)
        try request.requireAdmin("Conflicts are listed on the admin port")
        let limit = try query.int("limit") ?? 1000
        guard limit > 0 else { throw HTTPFailure.badRequest("limit must be positive") }
        let listings = try await storeCall { () async throws(StoreError) in try await store.conflictedDocuments(limit: limit) }
        let waiting = monitor?.waitingForMergeBase ?? [:]
        let rows: [JSON] = listings.map { listing in
            let live = listing.tree.liveLeaves
            var row: [String: JSON] = [
                "id": .string(listing.docID),
                "rev": .string(listing.winner.description),
                "conflicts": .array(live.dropFirst().map { .string($0.description) }),
            ]
            if let base = listing.tree.mergeBase { row["merge_base"] = .string(base.description) }
            if let base = waiting[listing.docID] { row["waiting_for_merge_base"] = .string(base.description) }
            return .object(row)
        }
        var body: [String: JSON] = ["total_rows": .int(Int64(rows.count)), "rows": .array(rows)]
        if let monitor {
            body["policies"] = Self.policiesJSON(monitor.policies)
            body["resolver"] = Self.resolverJSON(monitor)
        }
        return RESTResponse.json(.object(body))
    }

    /// `POST /{db}/{doc}/_resolve` (admin port), body optional: `{"policy": "merge"}`.
    /// Resolves the document's conflict now with the database's policy (or the one
    /// given) and answers with what was written.
    func resolve(docID: String, monitor: ConflictMonitor?) async throws -> Response {
        try allow(request, "POST", request.method == .post)
        try request.requireAdmin("Conflicts are resolved on the admin port")
        guard let monitor else { throw HTTPFailure.notFound("no conflict resolution on this database") }
        var policy: ConflictPolicy?
        let body = try await request.optionalJSONObjectBody(limit: configuration.maxRequestBytes) ?? [:]
        if let chosen = body["rev"] { return try await resolve(docID: docID, keeping: chosen) }
        if let value = body["policy"] {
            guard let text = value.stringValue else { throw HTTPFailure.badRequest("policy must be a string") }
            do {
                policy = try ConflictPolicy(parsing: text)
            } catch {
                throw HTTPFailure.badRequest(error.description)
            }
        }
        let outcome = try await storeCall { () async throws(StoreError) in try await monitor.resolveOrThrow(docID, policy: policy) }
        var answer: [String: JSON] = ["id": .string(docID)]
        switch outcome {
        case .noConflict:
            answer["ok"] = true
            answer["outcome"] = "no_conflict"
        case .keep:
            answer["ok"] = true
            answer["outcome"] = "kept"
        case .resolved(let resolution):
            answer["ok"] = true
            answer["outcome"] = "resolved"
            answer["policy"] = .string(resolution.policy.description)
            if let current = resolution.current { answer["rev"] = .string(current.description) }
            answer["deleted"] = .bool(resolution.deletesDocument)
            answer["revs"] = .array(resolution.revisions.map { .string($0.revID.description) })
        case .needsMergeBase(let base):
            throw HTTPFailure(.conflict, "conflict", "merge base \(base) of \(docID) is not stored on this node and no peer sent it")
        case .failed(let reason):
            throw HTTPFailure(.conflict, "conflict", "conflict of \(docID) not resolved: \(reason)")
        }
        return RESTResponse.json(.object(answer))
    }

    /// `POST /{db}/{doc}/_resolve` with `{"rev": leaf}`: keeps that live leaf and writes a
    /// tombstone on every other live leaf (the same revisions on every node that does it).
    private func resolve(docID: String, keeping chosen: JSON) async throws -> Response {
        guard let text = chosen.stringValue, let keep = RevID(text) else { throw HTTPFailure.badRequest("rev must be a revision ID") }
        guard let metadata = try await storeCall({ () async throws(StoreError) in try await store.metadata(docID) }) else {
            throw HTTPFailure.notFound()
        }
        let live = metadata.tree.liveLeaves
        guard live.contains(keep) else { throw HTTPFailure(.conflict, "conflict", "\(text) is not a live leaf of \(docID)") }
        var written: [JSON] = []
        // A resolution this node's administrator chose: recorded as this node's resolver's.
        let origin = RevisionOrigin.resolver(node: configuration.nodeID, detail: "_resolve: keep \(text)")
        for leaf in live where leaf != keep {
            let result = try await save(DocumentUpdate(docID: docID, body: [:], deleted: true, mode: .edit(parent: leaf)), origin: origin)
            written.append(.string(result.revID.description))
        }
        return RESTResponse.json([
            "id": .string(docID), "ok": true, "outcome": "resolved", "policy": "chosen", "rev": .string(text),
            "deleted": false, "revs": .array(written),
        ])
    }

    /// What the node's resolver has done (`resolver` of `_conflicts` and the admin UI's feed).
    static func resolverJSON(_ monitor: ConflictMonitor) -> JSON {
        let counters = monitor.counters
        return [
            "resolved": .int(Int64(counters.resolved)), "revisions_written": .int(Int64(counters.revisionsWritten)),
            "kept": .int(Int64(counters.kept)), "failed": .int(Int64(counters.failed)),
            "waiting_for_merge_base": .int(Int64(monitor.waitingForMergeBase.count)),
        ]
    }

    static func policiesJSON(_ policies: ConflictPolicies) -> JSON {
        [
            "default": .string(policies.defaultPolicy.description),
            "types": .object(policies.byType.mapValues { .string($0.description) }),
            "type_field": .string(policies.typeField),
        ]
    }

    private func storeCall<T>(_ work: () async throws(StoreError) -> T) async throws(HTTPFailure) -> T {
        do {
            return try await work()
        } catch {
            throw HTTPFailure(error)
        }
    }
}
