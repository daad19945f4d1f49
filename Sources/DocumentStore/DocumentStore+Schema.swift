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
    /// - `rev_access`: what each revision means for access (`RevisionAccess` as JSON),
    ///   written when a `RevisionGate` is installed.
    /// - `doc_channels`: each document's channels (those of its winning revision), with
    ///   the sequence of its latest change in that channel, or of its removal from it.
    /// - `access_grants`, `role_grants`: the grants of each document's winning revision
    ///   (`access()`, `role()`), with the sequence at which each grant first took effect.
    /// - `principals`: users and roles (their JSON, password hashes included).
    /// - `sessions`: login sessions (`SyncGatewaySession` cookies).
    /// - `docs_conflicted`: a partial index of the conflicted documents by sequence, so
    ///   that finding new conflicts reads only them (`conflictedDocuments`).
    /// - `revocations`: grants and admin channels or roles taken away, by grantee.
    /// - `rev_origins`: where the revisions of each committed change came from
    ///   (`RevisionOrigin`), one row per run of consecutive sequences with the same
    ///   origin; node-local, never replicated.
    /// - `docs.vv`, `revs.vv`: the version vector of the revision whose body the row
    ///   holds (Sync Gateway's text form); NULL when it is `Version.legacy(revID:)` alone,
    ///   as for every revision written before `v8-versions` (docs/storage.md "Versions").
    ///   `info.source` is the database's `SourceID`, `meta.hlc` its clock's last time.
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
        migrator.registerMigration("v3-access") { db in
            try db.execute(sql: """
                CREATE TABLE rev_access (
                    doc INTEGER NOT NULL,
                    rev TEXT NOT NULL,
                    data BLOB NOT NULL,
                    PRIMARY KEY (doc, rev)
                ) WITHOUT ROWID;
                CREATE TABLE doc_channels (
                    channel TEXT NOT NULL,
                    doc INTEGER NOT NULL,
                    seq INTEGER NOT NULL,
                    rev TEXT NOT NULL,
                    removed INTEGER NOT NULL,
                    PRIMARY KEY (channel, doc)
                ) WITHOUT ROWID;
                CREATE INDEX doc_channels_by_seq ON doc_channels(channel, seq);
                CREATE INDEX doc_channels_by_doc ON doc_channels(doc);
                CREATE TABLE access_grants (
                    grantee TEXT NOT NULL,
                    channel TEXT NOT NULL,
                    doc INTEGER NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (grantee, channel, doc)
                ) WITHOUT ROWID;
                CREATE INDEX access_grants_by_doc ON access_grants(doc);
                CREATE TABLE role_grants (
                    user TEXT NOT NULL,
                    role TEXT NOT NULL,
                    doc INTEGER NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (user, role, doc)
                ) WITHOUT ROWID;
                CREATE INDEX role_grants_by_doc ON role_grants(doc);
                CREATE TABLE principals (
                    kind TEXT NOT NULL,
                    name TEXT NOT NULL,
                    body BLOB NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (kind, name)
                ) WITHOUT ROWID;
                CREATE TABLE sessions (
                    id TEXT PRIMARY KEY,
                    user TEXT NOT NULL,
                    expires REAL NOT NULL,
                    ttl REAL NOT NULL
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v4-conflicted-index") { db in
            // Only conflicted rows are indexed: writes of other documents never touch it.
            try db.execute(sql: "CREATE INDEX docs_conflicted ON docs(seq) WHERE conflicted = 1")
        }
        migrator.registerMigration("v5-revocations") { db in
            // What was taken away, and when: a grant of a document that stopped making
            // it, an admin channel or role removed from a principal. Read by feeds that
            // tell a reader which documents it lost access to while it was away.
            try db.execute(sql: """
                CREATE TABLE revocations (
                    grantee TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    name TEXT NOT NULL,
                    seq INTEGER NOT NULL
                );
                CREATE INDEX revocations_by_grantee ON revocations(grantee, seq);
                """)
        }
        migrator.registerMigration("v6-rev-origins") { db in
            // Sequences first_seq…last_seq were written by `kind` (local, resolver, peer),
            // on or from `node`. Revisions from before this table have no origin.
            try db.execute(sql: """
                CREATE TABLE rev_origins (
                    first_seq INTEGER PRIMARY KEY,
                    last_seq INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    node TEXT,
                    detail TEXT
                );
                """)
        }
        migrator.registerMigration("v7-collections") { db in
            // Named collections (Sync Gateway 3 scopes and collections): each has a
            // number here and its own `c<number>_` tables (`collectionSchema`); the
            // default collection keeps the tables above, so existing data stays put.
            try db.execute(sql: """
                CREATE TABLE collections (
                    id INTEGER PRIMARY KEY,
                    scope TEXT NOT NULL,
                    name TEXT NOT NULL,
                    UNIQUE (scope, name)
                );
                """)
        }
        migrator.registerMigration("v8-versions") { db in
            // Version vectors beside the bodies. ADD COLUMN only edits the schema: no row
            // is rewritten, and a NULL vector reads as the revision's legacy version.
            try db.execute(sql: "ALTER TABLE docs ADD COLUMN vv TEXT; ALTER TABLE revs ADD COLUMN vv TEXT")
            for id in try Int.fetchAll(db, sql: "SELECT id FROM collections") {
                let p = Tables.prefix(id)
                try db.execute(sql: "ALTER TABLE \(p)docs ADD COLUMN vv TEXT; ALTER TABLE \(p)revs ADD COLUMN vv TEXT")
            }
            try db.execute(sql: "INSERT OR IGNORE INTO meta(key, value) VALUES ('hlc', 0)")
        }
        return migrator
    }

    /// The tables of named collection `number`: those of the default collection (as
    /// the migrations above leave them) with the prefix `c<number>_`, except the
    /// principals and sessions, which are the database's. Idempotent.
    static func createCollectionSchema(_ db: Database, number: Int) throws {
        let p = Tables.prefix(number)
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(p)docs (
                id INTEGER PRIMARY KEY,
                key TEXT NOT NULL UNIQUE,
                seq INTEGER NOT NULL,
                winner TEXT NOT NULL,
                deleted INTEGER NOT NULL,
                conflicted INTEGER NOT NULL,
                tree BLOB NOT NULL,
                body BLOB,
                vv TEXT
            );
            CREATE UNIQUE INDEX IF NOT EXISTS \(p)docs_by_seq ON \(p)docs(seq);
            CREATE INDEX IF NOT EXISTS \(p)docs_conflicted ON \(p)docs(seq) WHERE conflicted = 1;
            CREATE TABLE IF NOT EXISTS \(p)revs (
                doc INTEGER NOT NULL, rev TEXT NOT NULL, body BLOB NOT NULL, vv TEXT, PRIMARY KEY (doc, rev)
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS \(p)local_docs (
                key TEXT PRIMARY KEY, gen INTEGER NOT NULL, body BLOB NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS \(p)meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
            INSERT OR IGNORE INTO \(p)meta(key, value) VALUES ('last_seq', 0), ('doc_count', 0), ('purge_seq', 0);
            CREATE TABLE IF NOT EXISTS \(p)info (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS \(p)rev_access (
                doc INTEGER NOT NULL, rev TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (doc, rev)
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS \(p)doc_channels (
                channel TEXT NOT NULL, doc INTEGER NOT NULL, seq INTEGER NOT NULL, rev TEXT NOT NULL,
                removed INTEGER NOT NULL, PRIMARY KEY (channel, doc)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS \(p)doc_channels_by_seq ON \(p)doc_channels(channel, seq);
            CREATE INDEX IF NOT EXISTS \(p)doc_channels_by_doc ON \(p)doc_channels(doc);
            CREATE TABLE IF NOT EXISTS \(p)access_grants (
                grantee TEXT NOT NULL, channel TEXT NOT NULL, doc INTEGER NOT NULL, seq INTEGER NOT NULL,
                PRIMARY KEY (grantee, channel, doc)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS \(p)access_grants_by_doc ON \(p)access_grants(doc);
            CREATE TABLE IF NOT EXISTS \(p)role_grants (
                user TEXT NOT NULL, role TEXT NOT NULL, doc INTEGER NOT NULL, seq INTEGER NOT NULL,
                PRIMARY KEY (user, role, doc)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS \(p)role_grants_by_doc ON \(p)role_grants(doc);
            CREATE TABLE IF NOT EXISTS \(p)revocations (
                grantee TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, seq INTEGER NOT NULL
            );
            CREATE INDEX IF NOT EXISTS \(p)revocations_by_grantee ON \(p)revocations(grantee, seq);
            CREATE TABLE IF NOT EXISTS \(p)rev_origins (
                first_seq INTEGER PRIMARY KEY, last_seq INTEGER NOT NULL, kind TEXT NOT NULL, node TEXT, detail TEXT
            );
            """)
        try db.execute(
            sql: "INSERT OR IGNORE INTO \(p)info(key, value) VALUES ('uuid', ?)", arguments: [UUID().uuidString.lowercased()])
    }
}
