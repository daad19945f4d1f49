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
/// - `view_dirty`: distinct keys whose rows changed since their groups were reduced.
/// Functions here run inside a transaction given by the caller and do no JavaScript.
enum ViewStorage {
    /// The `level` of exact-key groups (`group=true`).
    static let exactLevel = 99
    /// Group levels kept besides the exact one: 0, 1 and 2.
    static let storedLevels = 2

    static func createTables(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS view_indexes (
                id INTEGER PRIMARY KEY,
                signature TEXT NOT NULL UNIQUE,
                seq INTEGER NOT NULL DEFAULT 0,
                row_count INTEGER NOT NULL DEFAULT 0,
                map_errors INTEGER NOT NULL DEFAULT 0
            );
            CREATE TABLE IF NOT EXISTS view_rows (
                view INTEGER NOT NULL,
                sortkey BLOB NOT NULL,
                docid TEXT NOT NULL,
                n INTEGER NOT NULL,
                key BLOB NOT NULL,
                value BLOB NOT NULL,
                PRIMARY KEY (view, sortkey, docid, n)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS view_rows_by_doc ON view_rows(view, docid);
            CREATE TABLE IF NOT EXISTS view_groups (
                view INTEGER NOT NULL,
                level INTEGER NOT NULL,
                sortkey BLOB NOT NULL,
                key BLOB NOT NULL,
                value BLOB NOT NULL,
                PRIMARY KEY (view, level, sortkey)
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS view_dirty (
                view INTEGER NOT NULL,
                sortkey BLOB NOT NULL,
                key BLOB NOT NULL,
                PRIMARY KEY (view, sortkey)
            ) WITHOUT ROWID;
            """)
    }

    /// The index row of `signature`, created empty if missing: (id, seq, rowCount, mapErrors).
    static func openIndex(_ db: Database, signature: String) throws -> IndexState {
        try db.execute(sql: "INSERT OR IGNORE INTO view_indexes(signature) VALUES (?)", arguments: [signature])
        let row = try Row.fetchOne(
            db, sql: "SELECT id, seq, row_count, map_errors FROM view_indexes WHERE signature = ?", arguments: [signature])!
        return IndexState(id: row[0], sequence: UInt64(row[1] as Int64), rowCount: row[2], mapErrors: row[3])
    }

    struct IndexState: Sendable {
        let id: Int64
        var sequence: UInt64
        var rowCount: Int64
        var mapErrors: Int64
    }

    /// One document's new rows (nil: the document is gone or not mapped).
    struct DocumentRows: Sendable {
        let docID: String
        let rows: [(key: JSON, value: JSON)]
    }

    /// Replaces the rows of the given documents, marks the changed keys dirty (when the
    /// view reduces) and advances the index to `sequence`.
    static func apply(
        _ db: Database, index: Int64, documents: [DocumentRows], sequence: UInt64, mapErrors: Int, reduces: Bool
    ) throws -> (rowDelta: Int64, total: Int64) {
        let oldKeys = try db.cachedStatement(sql: "SELECT sortkey, key FROM view_rows WHERE view = ? AND docid = ?")
        let delete = try db.cachedStatement(sql: "DELETE FROM view_rows WHERE view = ? AND docid = ?")
        let insert = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO view_rows(view, sortkey, docid, n, key, value) VALUES (?, ?, ?, ?, ?, ?)")
        let dirty = try db.cachedStatement(sql: "INSERT OR IGNORE INTO view_dirty(view, sortkey, key) VALUES (?, ?, ?)")
        var delta: Int64 = 0
        for document in documents {
            if reduces {
                for row in try Row.fetchAll(oldKeys, arguments: [index, document.docID]) {
                    try dirty.execute(arguments: [index, row[0] as Data, row[1] as Data])
                }
            }
            try delete.execute(arguments: [index, document.docID])
            delta -= Int64(db.changesCount)
            for (n, row) in document.rows.enumerated() {
                let sortKey = Data(ViewCollation.sortKey(row.key))
                let keyBytes = Data(row.key.canonicalBytes())
                try insert.execute(arguments: [index, sortKey, document.docID, n, keyBytes, Data(row.value.canonicalBytes())])
                if reduces { try dirty.execute(arguments: [index, sortKey, keyBytes]) }
            }
            delta += Int64(document.rows.count)
        }
        try db.execute(
            sql: "UPDATE view_indexes SET seq = ?, row_count = row_count + ?, map_errors = map_errors + ? WHERE id = ?",
            arguments: [Int64(sequence), delta, mapErrors, index])
        let total = try Int64.fetchOne(db, sql: "SELECT row_count FROM view_indexes WHERE id = ?", arguments: [index]) ?? 0
        return (delta, total)
    }

    /// Drops the indexes whose signature is not in `keep`; returns how many.
    static func dropIndexes(_ db: Database, keeping keep: Set<String>) throws -> [String] {
        let all = try Row.fetchAll(db, sql: "SELECT id, signature FROM view_indexes")
        var dropped: [String] = []
        for row in all where !keep.contains(row[1] as String) {
            let id: Int64 = row[0]
            for table in ["view_rows", "view_groups", "view_dirty"] {
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
