import Foundation
import GRDB

/// The SQL of Mango indexes: Query's own `mango_*` tables in the database's SQLite file
/// (docs/storage.md).
///
/// - `mango_indexes`: one row per index signature, with the sequence up to which
///   documents are indexed;
/// - `mango_rows`: one row per indexed document, keyed by (index, collation sort key of
///   the array of its field values, document ID): a key range is one range scan.
enum MangoStorage {
    static func createTables(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS mango_indexes (
                id INTEGER PRIMARY KEY,
                signature TEXT NOT NULL UNIQUE,
                seq INTEGER NOT NULL DEFAULT 0
            );
            CREATE TABLE IF NOT EXISTS mango_rows (
                idx INTEGER NOT NULL,
                sortkey BLOB NOT NULL,
                docid TEXT NOT NULL,
                PRIMARY KEY (idx, sortkey, docid)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS mango_rows_by_doc ON mango_rows(idx, docid);
            """)
    }

    /// The index's row ID and sequence, created at 0 if missing.
    static func open(_ db: Database, signature: String) throws -> (id: Int64, seq: UInt64) {
        try db.execute(sql: "INSERT OR IGNORE INTO mango_indexes(signature) VALUES (?)", arguments: [signature])
        let row = try Row.fetchOne(db, sql: "SELECT id, seq FROM mango_indexes WHERE signature = ?", arguments: [signature])!
        return (row[0], UInt64(row[1] as Int64))
    }

    /// Replaces the rows of `docs` (nil key: not indexed) and moves the index to `seq`,
    /// only if it is still at `from` (else another updater got there first: false).
    static func apply(
        _ db: Database, index: Int64, from: UInt64, to seq: UInt64, docs: [(id: String, key: [UInt8]?)]
    ) throws -> Bool {
        try db.execute(sql: "UPDATE mango_indexes SET seq = ? WHERE id = ? AND seq = ?",
                       arguments: [Int64(seq), index, Int64(from)])
        guard db.changesCount == 1 else { return false }
        let delete = try db.cachedStatement(sql: "DELETE FROM mango_rows WHERE idx = ? AND docid = ?")
        let insert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO mango_rows(idx, sortkey, docid) VALUES (?, ?, ?)")
        for doc in docs {
            try delete.execute(arguments: [index, doc.id])
            if let key = doc.key { try insert.execute(arguments: [index, Data(key), doc.id]) }
        }
        return true
    }

    /// Up to `limit` rows of the index within [lower, upper), after the bookmark
    /// position `after` (sort key, document ID), in key order or reversed.
    static func scan(
        _ db: Database, index: Int64, lower: [UInt8]?, upper: [UInt8]?, after: (key: [UInt8], id: String)?,
        reverse: Bool, limit: Int
    ) throws -> [(key: [UInt8], id: String)] {
        var sql = "SELECT sortkey, docid FROM mango_rows WHERE idx = ?"
        var arguments: StatementArguments = [index]
        if let lower {
            sql += " AND sortkey >= ?"
            arguments += [Data(lower)]
        }
        if let upper {
            sql += " AND sortkey < ?"
            arguments += [Data(upper)]
        }
        if let after {
            sql += reverse ? " AND (sortkey < ? OR (sortkey = ? AND docid < ?))" : " AND (sortkey > ? OR (sortkey = ? AND docid > ?))"
            arguments += [Data(after.key), Data(after.key), after.id]
        }
        sql += reverse ? " ORDER BY sortkey DESC, docid DESC" : " ORDER BY sortkey, docid"
        sql += " LIMIT \(limit)"
        return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            ([UInt8](row[0] as Data), row[1] as String)
        }
    }

    /// Drops the indexes of `namespace` (`IndexNamespace`) whose signatures are not in
    /// `keep`; returns how many.
    static func dropUnused(_ db: Database, keep: Set<String>, namespace: String) throws -> Int {
        let all = try Row.fetchAll(db, sql: "SELECT id, signature FROM mango_indexes")
        var dropped = 0
        for row in all where !keep.contains(row[1] as String) && IndexNamespace.owns(row[1], namespace: namespace) {
            let id: Int64 = row[0]
            try db.execute(sql: "DELETE FROM mango_rows WHERE idx = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM mango_indexes WHERE id = ?", arguments: [id])
            dropped += 1
        }
        return dropped
    }
}
