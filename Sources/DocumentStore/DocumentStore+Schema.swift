import Foundation
import GRDB

extension DocumentStore {
    /// The schema, as GRDB migrations. Add new migrations at the end; never edit one
    /// that has shipped.
    ///
    /// - `docs`: one row per document: its latest sequence, winner, flags, serialized
    ///   `RevTree`, and the winning revision's body (canonical JSON).
    /// - `revs`: bodies of other revisions (losing leaves, ancestors kept as possible
    ///   merge bases) keyed by document row and revision ID.
    /// - `local_docs`: `_local/` documents, not replicated, revisions `0-N`.
    /// - `meta`: counters (`last_seq`, `doc_count`, `purge_seq`).
    /// - `info`: text facts (`uuid`: this database's identity, fixed at creation).
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE docs (
                    id INTEGER PRIMARY KEY,
                    key TEXT NOT NULL UNIQUE,
                    seq INTEGER NOT NULL,
                    winner TEXT NOT NULL,
                    deleted INTEGER NOT NULL,
                    conflicted INTEGER NOT NULL,
                    tree BLOB NOT NULL,
                    body BLOB
                );
                CREATE UNIQUE INDEX docs_by_seq ON docs(seq);
                CREATE TABLE revs (
                    doc INTEGER NOT NULL,
                    rev TEXT NOT NULL,
                    body BLOB NOT NULL,
                    PRIMARY KEY (doc, rev)
                ) WITHOUT ROWID;
                CREATE TABLE local_docs (
                    key TEXT PRIMARY KEY,
                    gen INTEGER NOT NULL,
                    body BLOB NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE meta (
                    key TEXT PRIMARY KEY,
                    value INTEGER NOT NULL
                ) WITHOUT ROWID;
                INSERT INTO meta(key, value) VALUES ('last_seq', 0), ('doc_count', 0), ('purge_seq', 0);
                """)
        }
        migrator.registerMigration("v2-info") { db in
            // Text facts about the database; `uuid` names it in replication checkpoints.
            try db.execute(sql: """
                CREATE TABLE info (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
                INSERT INTO info(key, value) VALUES ('uuid', ?);
                """, arguments: [UUID().uuidString.lowercased()])
        }
        return migrator
    }
}
