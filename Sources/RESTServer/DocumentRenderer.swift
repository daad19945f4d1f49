import Blocking
import DocumentModel
import DocumentStore
import Foundation

/// Turns a stored revision into the JSON a client reads: `_id`, `_rev`, `_deleted`,
/// attachment stubs or inline data, and the optional `_cv`, `_revisions`, `_revs_info`,
/// `_conflicts` and `_deleted_conflicts`.
struct DocumentRenderer: Sendable {
    /// `_cv`: the revision's current version. A single document's `GET` shows it unless
    /// `show_cv=false`, as Sync Gateway 4 does; the readers replicators use (`open_revs`,
    /// `_bulk_get`, `_all_docs`, views) only with `show_cv=true`, because PouchDB refuses
    /// a document with an `_` property it does not know.
    var currentVersion = false
    var revisions = false
    var revsInfo = false
    var conflicts = false
    var deletedConflicts = false
    /// Inline attachment data (`attachments=true`).
    var attachments = false
    /// With `attachments`, only attachments added after these revisions carry data.
    var attachmentsSince: [RevID] = []

    init() {}

    init(query: QueryParameters) throws(HTTPFailure) {
        let meta = try query.bool("meta")
        revisions = try query.bool("revs")
        revsInfo = try query.bool("revs_info") || meta
        conflicts = try query.bool("conflicts") || meta
        deletedConflicts = try query.bool("deleted_conflicts") || meta
        attachments = try query.bool("attachments")
        currentVersion = try query.bool("show_cv")
        attachmentsSince = try Self.revList(query.stringList("atts_since") ?? [], name: "atts_since")
    }

    static func revList(_ strings: [String], name: String) throws(HTTPFailure) -> [RevID] {
        try strings.map { (string: String) throws(HTTPFailure) -> RevID in
            guard let rev = RevID(string) else { throw .badRequest("Invalid revision ID in \(name): \(string)") }
            return rev
        }
    }

    /// `render` with the data of the attachments it inlines read first, on the blocking pool.
    func render(_ revision: Revision, tree: RevTree, blobs: BlobStore) async -> JSON {
        render(revision, tree: tree, inline: await inlineData(revision.body, tree: tree, blobs: blobs), blobs: blobs)
    }

    /// The content of the attachments `render` inlines (none without `attachments`), by
    /// digest, read on the blocking pool.
    func inlineData(_ body: [String: JSON]?, tree: RevTree, blobs: BlobStore) async -> [String: [UInt8]] {
        guard attachments, let entries = body?["_attachments"]?.objectValue, !entries.isEmpty else { return [:] }
        let knownGeneration = knownAttachmentGeneration(tree)
        let digests = entries.values.compactMap { entry -> String? in
            guard Int(entry["revpos"]?.intValue ?? 0) > knownGeneration else { return nil }
            return entry["digest"]?.stringValue
        }
        guard !digests.isEmpty else { return [:] }
        return await BlockingPool.shared.perform {
            var data: [String: [UInt8]] = [:]
            for digest in digests { data[digest] = blobs.readHere(digest) }
            return data
        }
    }

    /// Renders with the inlined attachments' content taken from `inline` (an attachment
    /// missing there is read on the calling thread: callers that cannot wait pass what
    /// `inlineData` read).
    func render(_ revision: Revision, tree: RevTree, inline: [String: [UInt8]], blobs: BlobStore) -> JSON {
        var object = revision.body ?? [:]
        object["_id"] = .string(revision.docID)
        object["_rev"] = .string(revision.revID.description)
        if currentVersion, let version = revision.version { object["_cv"] = .string(version.current.description) }
        if revision.deleted { object["_deleted"] = true }
        if let attachmentsJSON = object["_attachments"]?.objectValue, !attachmentsJSON.isEmpty {
            object["_attachments"] = .object(renderAttachments(attachmentsJSON, tree: tree, inline: inline, blobs: blobs))
        } else {
            object.removeValue(forKey: "_attachments")
        }
        let history = tree.history(of: revision.revID)
        if revisions { object["_revisions"] = RevisionsJSON.encode(history) }
        if revsInfo {
            object["_revs_info"] = .array(history.map { rev in
                let node = tree.node(for: rev)
                let status = node?.deleted == true ? "deleted" : (node?.hasBody == true ? "available" : "missing")
                return ["rev": .string(rev.description), "status": .string(status)]
            })
        }
        if conflicts {
            let others = tree.liveLeaves.filter { $0 != revision.revID }
            if !others.isEmpty { object["_conflicts"] = .array(others.map { .string($0.description) }) }
        }
        if deletedConflicts {
            let others = tree.leaves.filter { $0 != revision.revID && tree.node(for: $0)?.deleted == true }
            if !others.isEmpty { object["_deleted_conflicts"] = .array(others.map { .string($0.description) }) }
        }
        return .object(object)
    }

    /// Attachments whose revpos is at or below a known `atts_since` revision are ones the
    /// client already has.
    private func knownAttachmentGeneration(_ tree: RevTree) -> Int {
        attachmentsSince.filter { tree.contains($0) }.map(\.generation).max() ?? 0
    }

    private func renderAttachments(_ entries: [String: JSON], tree: RevTree, inline: [String: [UInt8]], blobs: BlobStore) -> [String: JSON] {
        let knownGeneration = knownAttachmentGeneration(tree)
        var result: [String: JSON] = [:]
        for (name, entry) in entries {
            guard var meta = entry.objectValue else { continue }
            let revpos = Int(meta["revpos"]?.intValue ?? 0)
            if attachments, revpos > knownGeneration, let digest = meta["digest"]?.stringValue,
               let bytes = inline[digest] ?? blobs.readHere(digest) {
                meta["data"] = .string(Data(bytes).base64EncodedString())
            } else {
                meta["stub"] = true
            }
            result[name] = .object(meta)
        }
        return result
    }
}
