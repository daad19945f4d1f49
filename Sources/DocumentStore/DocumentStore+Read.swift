import DocumentModel
import Foundation
import GRDB

extension DocumentStore {
    /// The document's metadata (revision tree, latest sequence), or nil if unknown.
    public func metadata(_ docID: String) async throws(StoreError) -> DocumentMetadata? {
        try await read { db in
            try DocumentRow.loadTree(db, key: docID).map {
                DocumentMetadata(docID: docID, tree: $0.tree, sequence: $0.sequence)
            }
        }
    }

    /// The metadata of several documents in one read (absent ones are left out).
    public func metadata(_ docIDs: [String]) async throws(StoreError) -> [String: DocumentMetadata] {
        try await read { db in
            var found: [String: DocumentMetadata] = [:]
            for docID in Set(docIDs) {
                if let row = try DocumentRow.loadTree(db, key: docID) {
                    found[docID] = DocumentMetadata(docID: docID, tree: row.tree, sequence: row.sequence)
                }
            }
            return found
        }
    }

    /// The winning revision (`rev == nil`; 404 `deleted` when the document is deleted)
    /// or a given revision (returned even if it is a tombstone; 404 `missing` if
    /// unknown or its body is gone), with its version vector.
    public func revision(_ docID: String, rev: RevID? = nil) async throws(StoreError) -> (DocumentMetadata, Revision) {
        let result: Result<(DocumentMetadata, Revision), StoreError> = try await read { db in
            guard let row = try DocumentRow.load(db, key: docID) else { return .failure(.missing) }
            let metadata = DocumentMetadata(docID: docID, tree: row.tree, sequence: row.sequence)
            let target = rev ?? metadata.winner
            guard let node = row.tree.node(for: target), let stored = try row.bodyAndVector(db, of: target) else {
                return .failure(.missing)
            }
            if rev == nil && node.deleted { return .failure(.deleted) }
            let revision = Revision(
                docID: docID, revID: target, deleted: node.deleted, body: try DocumentRow.decode(stored.body),
                sequence: node.sequence, version: try Self.vector(stored.vector, revID: target))
            return .success((metadata, revision))
        }
        return try result.get()
    }

    /// Several revisions of one document in one read: the given ones, or every leaf
    /// when `revs` is nil (`open_revs=all`). Unknown revisions come back as `.missing`.
    public func revisions(_ docID: String, revs: [RevID]?) async throws(StoreError) -> (DocumentMetadata, [RevisionLookup])? {
        try await read { db in
            guard let row = try DocumentRow.load(db, key: docID) else { return nil }
            let metadata = DocumentMetadata(docID: docID, tree: row.tree, sequence: row.sequence)
            let wanted = revs ?? row.tree.leaves
            let lookups: [RevisionLookup] = try wanted.map { rev in
                guard let node = row.tree.node(for: rev), let stored = try row.bodyAndVector(db, of: rev) else {
                    return .missing(rev)
                }
                return .found(Revision(
                    docID: docID, revID: rev, deleted: node.deleted, body: try DocumentRow.decode(stored.body),
                    sequence: node.sequence, version: try Self.vector(stored.vector, revID: rev)))
            }
            return (metadata, lookups)
        }
    }

    /// The revisions of `revs` that `tree` lacks, with the leaves that could be their
    /// ancestors; nil when it lacks none.
    static func revsDiffEntry(docID: String, revs: [RevID], tree: RevTree?) -> RevsDiffEntry? {
        let missing = revs.filter { !(tree?.contains($0) ?? false) }
        guard !missing.isEmpty else { return nil }
        var possible: [RevID] = []
        if let tree {
            let maxGeneration = missing.map(\.generation).max() ?? 0
            possible = tree.leaves.filter { $0.generation < maxGeneration }
        }
        return RevsDiffEntry(docID: docID, missing: missing, possibleAncestors: possible)
    }
}

/// The outcome of looking up one revision.
public enum RevisionLookup: Sendable, Equatable {
    case found(Revision)
    case missing(RevID)
}

/// One document's answer in `_revs_diff`.
public struct RevsDiffEntry: Sendable, Equatable {
    public let docID: String
    public let missing: [RevID]
    public let possibleAncestors: [RevID]
}

/// A revision to send to a peer, with its ancestry (newest first, without itself).
public struct OutgoingRevision: Sendable {
    public let docID: String
    public let revID: RevID
    public let deleted: Bool
    public let sequence: UInt64
    /// The body exactly as stored (canonical JSON, `_attachments` included when the
    /// revision has any), so a sender can pass it on without parsing it.
    public let bodyBytes: [UInt8]
    /// Ancestors of `revID`, parent first.
    public let history: [RevID]
    /// The stored text of the revision's version vector (nil: its legacy version).
    let versionText: String?

    init(docID: String, revID: RevID, deleted: Bool, sequence: UInt64, bodyBytes: [UInt8], history: [RevID],
         versionText: String?) {
        self.docID = docID
        self.revID = revID
        self.deleted = deleted
        self.sequence = sequence
        self.bodyBytes = bodyBytes
        self.history = history
        self.versionText = versionText
    }

    /// The stored text of the revision's vector (Sync Gateway's form), nil when it is the
    /// revision's legacy version alone: what a Shoal peer is sent as it is.
    public var storedVersionText: String? { versionText }

    /// The revision's version vector (parsed from the stored text when asked for).
    public func version() throws(StoreError) -> VersionVector {
        try DocumentStore.vector(versionText, revID: revID)
    }

    /// The stored body parsed.
    public func body() throws(StoreError) -> [String: JSON] {
        do {
            return try DocumentRow.decode(bodyBytes)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.storage, reason: "\(error)")
        }
    }
}

extension DocumentStore {
    /// Many revisions with their histories in one read (replication sends them):
    /// nil for each one that is unknown or has no body. Bodies stay as stored bytes.
    public func revisionsToSend(_ items: [(docID: String, revID: RevID)]) async throws(StoreError) -> [OutgoingRevision?] {
        try await read { db in
            var rows: [String: DocumentRow?] = [:]
            return try items.map { docID, rev in
                let row: DocumentRow?
                if let cached = rows[docID] {
                    row = cached
                } else {
                    row = try DocumentRow.load(db, key: docID)
                    rows[docID] = row
                }
                guard let row, let node = row.tree.node(for: rev), let stored = try row.bodyAndVector(db, of: rev) else {
                    return nil
                }
                return OutgoingRevision(
                    docID: docID, revID: rev, deleted: node.deleted, sequence: node.sequence, bodyBytes: stored.body,
                    history: Array(row.tree.history(of: rev).dropFirst()), versionText: stored.vector)
            }
        }
    }
}
