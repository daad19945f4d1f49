import Foundation
import GRDB

/// Named collections (Sync Gateway 3 scopes and collections) of one database: each is a
/// `DocumentStore` of its own — documents, revision trees, sequences, changes feed,
/// local documents, channel and grant indexes — over `c<n>_` tables of the same SQLite
/// file, sharing the file's connections, its gate (rekeys), encryption, attachment
/// blobs, and the database's principals and sessions. See docs/storage.md.
extension DocumentStore {
    /// The store of named collection `name` (the store itself for the default
    /// collection), created on first use. Call it on the database's (default
    /// collection's) store.
    public func collection(_ name: CollectionName) throws -> DocumentStore {
        if name.isDefault { return base ?? self }
        if let base { return try base.collection(name) }
        if let open = namedCollections.withLock({ $0[name] }) { return open }
        let number = try writer.write { db -> Int in
            if let id = try Int.fetchOne(
                db, sql: "SELECT id FROM collections WHERE scope = ? AND name = ?", arguments: [name.scope, name.name])
            {
                try Self.createCollectionSchema(db, number: id)
                try accessTracker.install(on: db, tableSets: [id])
                return id
            }
            try db.execute(sql: "INSERT INTO collections(scope, name) VALUES (?, ?)", arguments: [name.scope, name.name])
            let id = Int(db.lastInsertedRowID)
            try Self.createCollectionSchema(db, number: id)
            try accessTracker.install(on: db, tableSets: [id])
            return id
        }
        let store = try DocumentStore(collection: name, number: number, base: self)
        return namedCollections.withLock { open in
            if let existing = open[name] { return existing }
            open[name] = store
            return store
        }
    }

    /// The store of the database's default collection (itself, for the default one):
    /// the one that owns the file, the principals and the sessions.
    public var databaseStore: DocumentStore { base ?? self }

    /// The latest sequence of one of the database's collections (nil: not open).
    public func lastSequence(of collection: CollectionName) -> UInt64? {
        let database = databaseStore
        if collection.isDefault { return database.lastSequence }
        return database.namedCollections.withLock { $0[collection] }?.lastSequence
    }

    /// The named collections this database's file holds (created by this or an earlier
    /// run), in name order.
    public func storedCollections() async throws(StoreError) -> [CollectionName] {
        try await (base ?? self).read { db in
            try Row.fetchAll(db, sql: "SELECT scope, name FROM collections ORDER BY scope, name").compactMap {
                CollectionName(scope: $0[0], name: $0[1])
            }
        }
    }

    /// The table numbers of every collection of the file (0 first).
    static func allTableSets(_ db: Database) throws -> [Int] {
        [0] + (try Int.fetchAll(db.cachedStatement(sql: "SELECT id FROM collections ORDER BY id")))
    }
}
