import CSQLiteCrypt
import Foundation
import GRDB
import GRDBSQLite

/// Opening a database file, encrypted or not, and its attachment key.
extension DocumentStore {
    /// The key of the `info` row that holds the attachment key (hex) of an encrypted database.
    static let attachmentKeyName = "attachment_key"

    /// GRDB's configuration for this store's connections. An encrypted file reserves
    /// `SHOAL_CRYPT_RESERVE` bytes per page for the VFS's seal (set before SQLite writes
    /// a new file's first page; an existing file already has it) and keeps temporary
    /// tables and sorts in memory.
    static func connectionConfiguration(_ configuration: StoreConfiguration, encrypted: Bool) -> Configuration {
        var config = Configuration()
        let synchronous = configuration.durability.synchronousPragma
        config.prepareDatabase { db in
            if encrypted {
                try Self.reservePageSpace(db)
                try db.execute(sql: "PRAGMA temp_store = MEMORY")
            }
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            if !db.configuration.readonly {
                // The writer's page cache holds a whole group commit (2000 replicated
                // documents dirty ≈ 6 MB of table and index pages) without spilling to
                // the WAL mid-transaction. Readers keep SQLite's default: their cache
                // is dropped whenever another connection commits anyway.
                try db.execute(sql: "PRAGMA cache_size = -\(Self.writerCacheKiB)")
                // Checkpoint every ≈ 32 MB of WAL instead of 4 MB: index pages rewritten
                // by consecutive commits are copied into the database once, not once
                // per commit. Durability is unchanged (it is `synchronous`'s business).
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.walAutocheckpointPages)")
            }
        }
        config.label = "shoal.\(configuration.name)"
        return config
    }

    /// Asks SQLite to keep the VFS's trailer bytes free in every page (of a new file, and
    /// of the next `VACUUM [INTO]`).
    static func reservePageSpace(_ db: Database) throws {
        var reserve = Int32(SHOAL_CRYPT_RESERVE)
        let result = sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve)
        guard result == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: result)) }
    }

    /// Checks the file against the configured key, installs the key in the VFS, and opens
    /// the pool. A wrong key, a missing key or a plain file given a key throw an
    /// `EncryptionError` before SQLite touches the file.
    static func openFile(
        path: String, configuration: StoreConfiguration
    ) throws -> (any DatabaseWriter, DatabaseCipher?, WALCheckpointer) {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        removeRekeyLeftovers(path: path)
        // Every connection of the process goes through the same default VFS, plain files
        // included: a plain database opened before the encrypting VFS existed and rekeyed
        // later would otherwise have connections on two VFSes (SQLite: disk I/O error).
        let registered = shoal_crypt_register()
        guard registered == SQLITE_OK else {
            throw StoreError(.storage, reason: "cannot register the encrypting SQLite VFS (SQLite error \(registered))")
        }
        var cipher: DatabaseCipher?
        do throws(EncryptionError) {
            if let secret = configuration.encryption {
                let opened = try DatabaseCipher.open(path: path, secret: secret, database: configuration.name)
                try opened.install(path: path)
                cipher = opened
            } else {
                try DatabaseCipher.checkPlain(path: path, database: configuration.name)
                DatabaseCipher.uninstall(path: path)
            }
        } catch {
            throw error.naming(configuration.name)
        }
        let (pool, checkpointer) = try openPool(path: path, configuration: configuration, encrypted: cipher != nil)
        return (pool, cipher, checkpointer)
    }

    /// Opens the WAL pool on `path` and gives its writer the configured `synchronous`.
    /// GRDB's `DatabasePool` sets `synchronous = NORMAL` on its writer after
    /// `prepareDatabase` has run (when it turns WAL on), so the writer's level has to be
    /// set again once the pool is open; readers never write and keep the prepared one.
    /// The writer's checkpoints are handed to a `WALCheckpointer`.
    static func openPool(
        path: String, configuration: StoreConfiguration, encrypted: Bool
    ) throws -> (DatabasePool, WALCheckpointer) {
        let connection = connectionConfiguration(configuration, encrypted: encrypted)
        let pool = try DatabasePool(path: path, configuration: connection)
        let checkpointer = WALCheckpointer(
            path: path, configuration: connection,
            threshold: Int32(walAutocheckpointPages), backstop: Int32(walBackstopPages))
        let synchronous = configuration.durability.synchronousPragma
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            checkpointer.install(on: db)
        }
        return (pool, checkpointer)
    }

    /// A rekey that stopped before its file replaced the database leaves `-rekey` files: drop them.
    static func removeRekeyLeftovers(path: String) {
        for suffix in ["-rekey", "-rekey-journal", "-rekey-wal", "-rekey-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }

    /// Sets the attachment cipher from the database and brings every blob into the form
    /// the database is in: an encrypted database gets a random attachment key (stored in
    /// its `info` table) and encrypts plain blobs; a plain database that still has a key
    /// (it was decrypted) decrypts its encrypted blobs, then forgets the key.
    func setUpAttachmentCipher(encrypted: Bool) throws {
        let stored = try writer.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM info WHERE key = ?", arguments: [Self.attachmentKeyName])
        }
        var key = stored.flatMap(EncryptionKey.hexBytes)
        if encrypted, key == nil {
            let fresh = DatabaseCipher.randomBytes(32)
            try writer.write { db in
                try db.execute(
                    sql: "INSERT OR REPLACE INTO info(key, value) VALUES (?, ?)",
                    arguments: [Self.attachmentKeyName, fresh.map { String(format: "%02x", $0) }.joined()])
            }
            key = fresh
        }
        let cipher = key.map { BlobCipher(key: $0) }
        blobs.cipher = encrypted ? cipher : nil
        blobs.readingCipher = cipher
        let pending = blobs.digests(encrypted: !encrypted)
        var failed = 0
        for digest in pending {
            do { try blobs.convert(digest) } catch {
                failed += 1
                logger.error("\(name): cannot \(encrypted ? "encrypt" : "decrypt") attachment \(digest): \(error)")
            }
        }
        if !pending.isEmpty {
            logger.info("\(name): \(encrypted ? "encrypted" : "decrypted") \(pending.count - failed) attachments")
        }
        if !encrypted, stored != nil, failed == 0 {
            try writer.write { db in
                try db.execute(sql: "DELETE FROM info WHERE key = ?", arguments: [Self.attachmentKeyName])
            }
            blobs.readingCipher = nil
        }
    }

    /// Whether the database file is encrypted now.
    public var isEncrypted: Bool { base?.isEncrypted ?? encryptedState.withLock { $0 } }
}
