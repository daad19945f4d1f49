import DocumentModel
import Foundation
import GRDB

/// One document of the changes feed as a replication sender reads it: the listing
/// plus the winning revision's stored body bytes, so that the winner (what a peer
/// usually wants) can be sent without a second lookup.
public struct ChangedDocument: Sendable {
    public let listing: DocumentListing
    /// The winner's body exactly as stored, nil for none.
    let winnerBody: [UInt8]?
    /// The winner's stored version vector text (nil: its legacy version).
    let winnerVector: String?

    /// A document whose bodies are read when sent.
    public init(listing: DocumentListing) {
        self.listing = listing
        winnerBody = nil
        winnerVector = nil
    }

    init(listing: DocumentListing, winnerBody: [UInt8]?, winnerVector: String?) {
        self.listing = listing
        self.winnerBody = winnerBody
        self.winnerVector = winnerVector
    }

    /// The winner's version vector when it was read with the body and the document has no
    /// other leaf (nil otherwise: ask `winnerVersions`, which adds the other leaves' versions).
    public func winnerVersion() -> VersionVector? {
        guard winnerBody != nil, listing.tree.leaves.count == 1, let winner = listing.tree.winner else { return nil }
        return try? DocumentStore.vector(winnerVector, revID: winner)
    }

    /// The winner's stored vector, as a Shoal peer's `changes` row offers it: `.unknown`
    /// when it was not read with the body.
    public var offeredWinnerVector: OfferedVector {
        winnerBody == nil ? .unknown : .stored(winnerVector)
    }

    /// The winner `rev` ready to send (stored bytes, ancestry), or nil when `rev`
    /// is not the winner or its body is not in the row (ask `revisionsToSend`).
    public func outgoing(_ rev: RevID) -> OutgoingRevision? {
        guard rev == listing.tree.winner, let winnerBody, let node = listing.tree.node(for: rev) else { return nil }
        return OutgoingRevision(
            docID: listing.docID, revID: rev, deleted: node.deleted, sequence: node.sequence, bodyBytes: winnerBody,
            history: Array(listing.tree.history(of: rev).dropFirst()), versionText: winnerVector)
    }
}

extension DocumentStore {
    /// The changes feed after `since` (as `changes(since:…)`), each document with
    /// its winner's stored body bytes: one read gives a sender all it needs for the
    /// common case. `activeOnly` leaves out documents deleted at or before
    /// `activeOnlyThrough` (`feedQuery`).
    public func changesForSending(
        since: UInt64, limit: Int, docIDs: Set<String>? = nil, activeOnly: Bool = false, activeOnlyThrough: UInt64 = .max
    ) async throws(StoreError) -> [ChangedDocument] {
        try await read { db in
            let (sql, arguments) = Self.feedQuery(
                columns: DocumentRow.columns, since: since, limit: limit, docIDs: docIDs, activeOnly: activeOnly,
                activeOnlyThrough: activeOnlyThrough)
            // Decoded straight from the statement (no copied `Row` per document).
            var documents: [ChangedDocument] = []
            documents.reserveCapacity(min(limit, 1000))
            let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
            while let row = try rows.next() {
                let document = try DocumentRow(row: row)
                documents.append(ChangedDocument(
                    listing: DocumentListing(docID: document.key, sequence: document.sequence, tree: document.tree, body: nil),
                    winnerBody: document.winnerBody, winnerVector: document.winnerVector))
            }
            return documents
        }
    }
}

extension DocumentStore {
    /// For each document, the given revisions it lacks and, for each lacking one, the
    /// known revisions that could be its ancestors (`_revs_diff`, and each `changes`
    /// batch of a replication): the trees are read by a few `IN (…)` queries.
    public func revsDiff(_ request: [(docID: String, revs: [RevID])]) async throws(StoreError) -> [RevsDiffEntry] {
        try await read(bounded: request.count <= Self.inlineReadKeys) { db in
            let trees = try Self.trees(db, keys: Array(Set(request.map(\.docID))))
            var result: [RevsDiffEntry] = []
            for (docID, revs) in request {
                if let entry = Self.revsDiffEntry(docID: docID, revs: revs, tree: trees[docID]) { result.append(entry) }
            }
            return result
        }
    }

    /// For each offered (document, revision) of a replication's `changes` batch, in order:
    /// nil when the store has the revision, else the leaves of the document that could be
    /// its ancestors (older generations; none for an unknown document). `revsDiff`'s
    /// answer per revision, without building it per document.
    public func missingRevisions(_ offered: [(docID: String, rev: RevID)]) async throws(StoreError) -> [[RevID]?] {
        try await read { db in
            Self.missing(offered, trees: try Self.trees(db, keys: Self.distinctKeys(offered)))
        }
    }

    /// The documents of `offered`, each once, sorted.
    static func distinctKeys(_ offered: [(docID: String, rev: RevID)]) -> [String] {
        var keys = offered.map(\.docID)
        keys.sort()
        var distinct: [String] = []
        distinct.reserveCapacity(keys.count)
        for key in keys where key != distinct.last { distinct.append(key) }
        return distinct
    }

    /// Per offered revision: nil when its document's tree holds it, else the leaves that
    /// could be its ancestors (older generations; none for an unknown document).
    static func missing(_ offered: [(docID: String, rev: RevID)], trees: [String: RevTree]) -> [[RevID]?] {
        offered.map { docID, rev in
            guard let tree = trees[docID] else { return [] }
            guard !tree.contains(rev) else { return nil }
            return tree.leaves.filter { $0.generation < rev.generation }
        }
    }

    /// The revision trees of those of `keys` (distinct) that are stored, read by a few
    /// `IN (…)` queries.
    static func trees(_ db: Database, keys: [String]) throws -> [String: RevTree] {
        var trees: [String: RevTree] = [:]
        try forEachDocument(db, keys: keys, columns: "key, tree") { row in
            trees[row[0]] = try tree(row, column: 1)
        }
        return trees
    }

    /// Calls `body` with `columns` of each stored document among `keys` (distinct), read
    /// by a few `IN (…)` queries.
    static func forEachDocument(_ db: Database, keys: [String], columns: String, _ body: (Row) throws -> Void) throws {
        var start = keys.startIndex
        while start < keys.endIndex {
            let chunk = keys[start..<min(start + keysPerQuery, keys.endIndex)]
            start = chunk.endIndex
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let statement = try db.cachedStatement(sql: "SELECT \(columns) FROM \(Tables.docs) WHERE key IN (\(placeholders))")
            let rows = try Row.fetchCursor(statement, arguments: StatementArguments(Array(chunk)))
            while let row = try rows.next() { try body(row) }
        }
    }

    /// Keys per `IN (…)` query (SQLite allows 32 766 parameters; fewer keeps the
    /// number of distinct cached statements small).
    static let keysPerQuery = 250
}
