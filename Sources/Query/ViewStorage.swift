import DocumentModel
import Foundation
import GRDB

/// The SQL of view indexes: Query's own tables in the database's SQLite file.
///
/// `ViewStorage` owns the `view_*` tables and every statement on them (docs/storage.md):
/// - `view_indexes`: one row per index (a view signature): the sequence up to which
///   documents are mapped, its row count and how many documents its map threw for;
/// - `view_rows`: emitted rows keyed by (index, collation sort key, doc ID, emit number),
///   so a key range is one index range scan in collation order;
/// - `view_groups`: stored partial reductions per group: `level` 0 (everything),
///   1 and 2 (array keys truncated to 1 or 2 elements) and `exactLevel` (one group per
///   distinct key), each keyed by the group key's sort key;
/// - `view_dirty`: distinct keys whose rows changed since their groups were reduced;
/// - `view_blocks`: row counts per block of consecutive rows, for `offset` (`ViewBlocks`).
/// Functions here run inside a transaction given by the caller and do no JavaScript.
enum ViewStorage {
    /// The `level` of exact-key groups (`group=true`).
    static let exactLevel = 99
    /// Group levels kept besides the exact one: 0, 1 and 2.
    static let storedLevels = 2

    static func createTables(_ db: Database) throws {
        try dropRowsWithoutDocumentNumbers(db)
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS view_indexes (
                id INTEGER PRIMARY KEY,
                signature TEXT NOT NULL UNIQUE,
                seq INTEGER NOT NULL DEFAULT 0,
                row_count INTEGER NOT NULL DEFAULT 0,
                map_errors INTEGER NOT NULL DEFAULT 0,
                purge_seq INTEGER NOT NULL DEFAULT 0
            );
            CREATE TABLE IF NOT EXISTS view_rows (
                view INTEGER NOT NULL,
                sortkey BLOB NOT NULL,
                docid TEXT NOT NULL,
                n INTEGER NOT NULL,
                key BLOB NOT NULL,
                value BLOB NOT NULL,
                docnum INTEGER NOT NULL,
                PRIMARY KEY (view, sortkey, docid, n)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS view_rows_by_number ON view_rows(view, docnum);
            CREATE TABLE IF NOT EXISTS view_groups (
                view INTEGER NOT NULL,
                level INTEGER NOT NULL,
                sortkey BLOB NOT NULL,
                key BLOB NOT NULL,
                value BLOB NOT NULL,
                PRIMARY KEY (view, level, sortkey)
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS view_blocks (
                view INTEGER NOT NULL,
                sortkey BLOB NOT NULL,
                docid TEXT NOT NULL,
                n INTEGER NOT NULL,
                count INTEGER NOT NULL,
                PRIMARY KEY (view, sortkey, docid, n)
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS view_dirty (
                view INTEGER NOT NULL,
                sortkey BLOB NOT NULL,
                key BLOB NOT NULL,
                PRIMARY KEY (view, sortkey)
            ) WITHOUT ROWID;
            """)
        // Indexes made before purges were followed lack the column: they check once.
        let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(view_indexes)").map { $0["name"] as String }
        if !columns.contains("purge_seq") {
            try db.execute(sql: "ALTER TABLE view_indexes ADD COLUMN purge_seq INTEGER NOT NULL DEFAULT 0")
        }
    }

    /// Indexes made before rows carried their document's number (`docnum`, found by an
    /// index that grows at its end while a build follows the changes feed, where the older
    /// `(view, docid)` index took writes all over the file) are emptied: they rebuild on
    /// their next query, as CouchDB rebuilds an index of an older format.
    private static func dropRowsWithoutDocumentNumbers(_ db: Database) throws {
        guard try db.tableExists("view_rows") else { return }
        let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(view_rows)").map { $0["name"] as String }
        guard !columns.contains("docnum") else { return }
        for table in ["view_rows", "view_groups", "view_blocks", "view_dirty"] {
            try db.execute(sql: "DROP TABLE IF EXISTS \(table)")
        }
        try db.execute(sql: "UPDATE view_indexes SET seq = 0, row_count = 0, map_errors = 0")
    }

    /// The index row of `signature`, created empty if missing: (id, seq, rowCount, mapErrors).
    static func openIndex(_ db: Database, signature: String) throws -> IndexState {
        try db.execute(sql: "INSERT OR IGNORE INTO view_indexes(signature) VALUES (?)", arguments: [signature])
        let row = try Row.fetchOne(
            db, sql: "SELECT id, seq, row_count, map_errors, purge_seq FROM view_indexes WHERE signature = ?",
            arguments: [signature])!
        return IndexState(
            id: row[0], sequence: UInt64(row[1] as Int64), rowCount: row[2], mapErrors: row[3], purgeSequence: row[4])
    }

    struct IndexState: Sendable {
        let id: Int64
        var sequence: UInt64
        var rowCount: Int64
        var mapErrors: Int64
        /// The database's purge count the index has removed purged documents' rows for.
        var purgeSequence: Int
    }

    /// The documents that have rows in the index, with their numbers.
    static func documents(_ db: Database, index: Int64) throws -> [(docID: String, number: Int64)] {
        try Row.fetchAll(db, sql: "SELECT DISTINCT docid, docnum FROM view_rows WHERE view = ?", arguments: [index])
            .map { ($0[0], $0[1]) }
    }

    static func setPurgeSequence(_ db: Database, index: Int64, to purgeSequence: Int) throws {
        try db.execute(sql: "UPDATE view_indexes SET purge_seq = ? WHERE id = ?", arguments: [purgeSequence, index])
    }

    /// One document's new rows (nil: the document is gone or not mapped).
    struct DocumentRows: Sendable {
        let docID: String
        /// The document's number (`DocumentText.number`), under which its rows are found.
        let number: Int64
        let rows: [(key: JSON, value: JSON)]
        /// False when the document is known to have no rows yet (no lookup needed).
        var hasRows = true
    }

    /// Replaces the rows of the given documents, marks the changed keys dirty (when the
    /// view reduces) and advances the index to `sequence`.
    static func apply(
        _ db: Database, index: Int64, documents: [DocumentRows], sequence: UInt64, mapErrors: Int, reduces: Bool
    ) throws -> (rowDelta: Int64, total: Int64) {
        let delete = try db.cachedStatement(sql: "DELETE FROM view_rows WHERE view = ? AND docnum = ? RETURNING sortkey, n, key")
        let insert = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO view_rows(view, sortkey, docid, n, key, value, docnum) VALUES (?, ?, ?, ?, ?, ?, ?)")
        let dirty = try db.cachedStatement(sql: "INSERT OR IGNORE INTO view_dirty(view, sortkey, key) VALUES (?, ?, ?)")
        var blocks = try ViewBlocks.load(db, view: index)
        var delta: Int64 = 0
        for document in documents {
            let docID = Array(document.docID.utf8)
            for row in document.hasRows ? try Row.fetchAll(delete, arguments: [index, document.number]) : [] {
                let sortKey: Data = row[0]
                blocks.add(ViewBlocks.Bound(sortKey: [UInt8](sortKey), docID: docID, n: row[1]), delta: -1)
                if reduces { try dirty.execute(arguments: [index, sortKey, row[2] as Data]) }
                delta -= 1
            }
            for (n, row) in document.rows.enumerated() {
                let sortKey = ViewCollation.sortKey(row.key)
                let keyBytes = Data(row.key.canonicalBytes())
                try insert.execute(arguments: [
                    index, Data(sortKey), document.docID, n, keyBytes, Data(row.value.canonicalBytes()), document.number,
                ])
                blocks.add(ViewBlocks.Bound(sortKey: sortKey, docID: docID, n: Int64(n)), delta: 1)
                if reduces { try dirty.execute(arguments: [index, Data(sortKey), keyBytes]) }
            }
            delta += Int64(document.rows.count)
        }
        try blocks.save(db)
        try db.execute(
            sql: "UPDATE view_indexes SET seq = ?, row_count = row_count + ?, map_errors = map_errors + ? WHERE id = ?",
            arguments: [Int64(sequence), delta, mapErrors, index])
        let total = try Int64.fetchOne(db, sql: "SELECT row_count FROM view_indexes WHERE id = ?", arguments: [index]) ?? 0
        return (delta, total)
    }

    /// Drops the indexes of `namespace` (`IndexNamespace`) whose stored signature is not
    /// in `keep`; returns their stored signatures.
    static func dropIndexes(_ db: Database, keeping keep: Set<String>, namespace: String) throws -> [String] {
        let all = try Row.fetchAll(db, sql: "SELECT id, signature FROM view_indexes")
        var dropped: [String] = []
        for row in all where !keep.contains(row[1] as String) && IndexNamespace.owns(row[1], namespace: namespace) {
            let id: Int64 = row[0]
            for table in ["view_rows", "view_groups", "view_dirty", "view_blocks"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE view = ?", arguments: [id])
            }
            try db.execute(sql: "DELETE FROM view_indexes WHERE id = ?", arguments: [id])
            dropped.append(row[1])
        }
        return dropped
    }

    static func decode(_ data: Data) throws -> JSON {
        try JSON.parse([UInt8](data))
    }
}
