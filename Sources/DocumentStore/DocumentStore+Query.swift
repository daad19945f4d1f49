import DocumentModel
import Foundation
import GRDB

/// One document as listed by the changes feed or `_all_docs`.
public struct DocumentListing: Sendable, Equatable {
    public let docID: String
    public let sequence: UInt64
    public let tree: RevTree
    /// The winner's body, when requested.
    public let body: [String: JSON]?

    public var winner: RevID { tree.winner! }
    public var deleted: Bool { tree.isDeleted }
}

/// A document as the changes feed lists it, with the winner's body as the JSON text the
/// store keeps (canonical, UTF-8), for readers that hand the text on without decoding it
/// (a view's map function).
public struct DocumentText: Sendable {
    public let docID: String
    /// The document's number in this database: given when the document is first stored and
    /// kept for its life (a purged document's number may be given again to a new one).
    public let number: Int64
    public let sequence: UInt64
    public let tree: RevTree
    /// The winner's body as stored JSON text (an object); nil for a tombstone without one.
    public let body: [UInt8]?

    public var winner: RevID { tree.winner! }
    public var deleted: Bool { tree.isDeleted }
}

/// Options of `_all_docs`.
public struct AllDocsQuery: Sendable {
    public var startKey: String?
    public var endKey: String?
    public var inclusiveEnd = true
    public var descending = false
    public var limit: Int?
    public var skip = 0
    public var includeBodies = false
    /// Only documents with more than one live leaf.
    public var onlyConflicts = false
    /// Only documents currently in at least one of these channels (a user's view);
    /// nil for all documents.
    public var channels: Set<String>?

    public init() {}
}

extension DocumentStore {
    /// Documents changed after `since`, in sequence order: each document once, at its
    /// latest sequence.
    public func changes(
        since: UInt64, limit: Int? = nil, docIDs: Set<String>? = nil, activeOnly: Bool = false,
        includeBodies: Bool = false
    ) async throws(StoreError) -> [DocumentListing] {
        try await read(bounded: limit != nil) { db in
            let (sql, arguments) = Self.feedQuery(
                columns: "key, seq, tree, \(includeBodies ? "body" : "NULL")", since: since, limit: limit, docIDs: docIDs,
                activeOnly: activeOnly)
            return try Self.listings(db, sql: sql, arguments: arguments)
        }
    }

    /// `changes(since:limit:)` with the bodies as stored JSON text, not decoded. The batch
    /// ends early once its bodies reach `maxBytes` (it always holds at least one document).
    /// A page of bodies (a view's batch): read on one of the pool's readers, never inline.
    public func changedTexts(since: UInt64, limit: Int, maxBytes: Int = .max) async throws(StoreError) -> [DocumentText] {
        try await scan { db in
            let (sql, arguments) = Self.feedQuery(
                columns: "key, seq, tree, body, id", since: since, limit: limit, docIDs: nil, activeOnly: false)
            let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
            var texts: [DocumentText] = []
            var bytes = 0
            while bytes < maxBytes, let row = try rows.next() {
                let body = (row[3] as Data?).map { [UInt8]($0) }
                bytes += body?.count ?? 0
                texts.append(DocumentText(
                    docID: row[0], number: row[4], sequence: UInt64(row[1] as Int64), tree: try Self.tree(row), body: body))
            }
            return texts
        }
    }

    /// The numbers (`DocumentText.number`) of those of `docIDs` that are stored, purged ones
    /// left out.
    public func documentNumbers(_ docIDs: [String]) async throws(StoreError) -> [String: Int64] {
        try await read(bounded: docIDs.count <= Self.inlineReadKeys) { db in
            var numbers: [String: Int64] = [:]
            let statement = try db.cachedStatement(sql: "SELECT id FROM \(Tables.docs) WHERE key = ?")
            for docID in docIDs {
                if let number = try Int64.fetchOne(statement, arguments: [docID]) { numbers[docID] = number }
            }
            return numbers
        }
    }

    /// The changes feed's query: `columns` of the documents changed after `since`, in
    /// sequence order (shared by `changes` and `changesForSending`). With `activeOnly`,
    /// deleted documents are left out, those deleted at or before `activeOnlyThrough`
    /// only (a replication's feed sends what is deleted after it started).
    static func feedQuery(
        columns: String, since: UInt64, limit: Int?, docIDs: Set<String>?, activeOnly: Bool,
        activeOnlyThrough: UInt64 = .max
    ) -> (String, StatementArguments) {
        var sql = "SELECT \(columns) FROM \(Tables.docs) WHERE seq > ?"
        var arguments: StatementArguments = [Int64(clamping: since)]
        if activeOnly {
            if activeOnlyThrough == .max {
                sql += " AND deleted = 0"
            } else {
                sql += " AND (deleted = 0 OR seq > ?)"
                arguments += [Int64(clamping: activeOnlyThrough)]
            }
        }
        if let docIDs {
            sql += " AND key IN (\(docIDs.map { _ in "?" }.joined(separator: ",")))"
            arguments += StatementArguments(Array(docIDs))
        }
        sql += " ORDER BY seq"
        if let limit { sql += " LIMIT \(max(0, limit))" }
        return (sql, arguments)
    }

    /// Live documents by ID (`_all_docs`).
    public func allDocs(_ query: AllDocsQuery) async throws(StoreError) -> [DocumentListing] {
        try await read(bounded: query.limit != nil) { db in
            var sql = "SELECT key, seq, tree, \(query.includeBodies ? "body" : "NULL") FROM \(Tables.docs) WHERE deleted = 0"
            var arguments: StatementArguments = []
            let (low, high) = query.descending ? (query.endKey, query.startKey) : (query.startKey, query.endKey)
            let lowInclusive = query.descending ? query.inclusiveEnd : true
            let highInclusive = query.descending ? true : query.inclusiveEnd
            if let low {
                sql += " AND key \(lowInclusive ? ">=" : ">") ?"
                arguments += [low]
            }
            if let high {
                sql += " AND key \(highInclusive ? "<=" : "<") ?"
                arguments += [high]
            }
            if query.onlyConflicts { sql += " AND conflicted = 1" }
            if let channels = query.channels {
                sql += " AND EXISTS (SELECT 1 FROM \(Tables.docChannels) c WHERE c.doc = \(Tables.docs).id AND c.removed = 0"
                sql += " AND c.channel IN (\(channels.map { _ in "?" }.joined(separator: ","))))"
                arguments += StatementArguments(Array(channels))
            }
            sql += " ORDER BY key \(query.descending ? "DESC" : "ASC")"
            sql += " LIMIT \(query.limit.map { max(0, $0) } ?? -1) OFFSET \(max(0, query.skip))"
            return try Self.listings(db, sql: sql, arguments: arguments)
        }
    }

    /// Given documents by ID, in the order asked, including deleted ones (`keys=`);
    /// nil for unknown IDs.
    public func documents(_ keys: [String], includeBodies: Bool) async throws(StoreError) -> [DocumentListing?] {
        try await read(bounded: keys.count <= Self.inlineReadKeys) { db in
            let statement = try db.cachedStatement(
                sql: "SELECT key, seq, tree, \(includeBodies ? "body" : "NULL") FROM \(Tables.docs) WHERE key = ?")
            return try keys.map { key in
                try Row.fetchOne(statement, arguments: [key]).map(Self.listing)
            }
        }
    }

    private static func listings(_ db: Database, sql: String, arguments: StatementArguments) throws -> [DocumentListing] {
        try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map(listing)
    }

    static func listing(_ row: Row) throws -> DocumentListing {
        let key: String = row[0]
        let tree = try Self.tree(row)
        let body = try (row[3] as Data?).map { try DocumentRow.decode([UInt8]($0)) }
        return DocumentListing(docID: key, sequence: UInt64(row[1] as Int64), tree: tree, body: body)
    }

    /// The revision tree in `column` (2 unless given) of a row whose column 0 is the
    /// document's key.
    static func tree(_ row: Row, column: Int = 2) throws -> RevTree {
        do {
            return try RevTree(serialized: row[column] as Data)
        } catch {
            throw StoreError(.storage, reason: "corrupt revision tree for \(row[0] as String): \(error)")
        }
    }
}
