import Blocking
import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#endif

/// What a rekey did.
public struct RekeyReport: Sendable, Equatable {
    /// Encrypted before and after.
    public var wasEncrypted: Bool
    public var isEncrypted: Bool
    /// Bytes of the new database file.
    public var bytes: Int
    /// How long accesses waited for the file swap.
    public var pausedSeconds: Double
}

extension DocumentStore {
    /// Re-encrypts the database with `secret` (nil: decrypts it), while the node runs.
    ///
    /// Accesses wait while it runs (`StoreGate`): the WAL is checkpointed, the whole
    /// database is copied with `VACUUM INTO` to `<file>-rekey` under the new key (a new
    /// salt), synced, the connections close, the WAL goes, and the copy is renamed over
    /// the database in one `rename(2)`. A crash before the rename leaves the old file
    /// (old key) complete; after it, the new one (new key) complete: the database opens
    /// with exactly one of the two keys and holds every acknowledged write. Attachments
    /// are encrypted with the attachment key kept inside the database, so a rotation
    /// does not rewrite them; encrypting or decrypting converts them one by one after
    /// the swap (and at the next open if it was interrupted).
    @discardableResult
    public func rekey(to secret: EncryptionKey?) async throws -> RekeyReport {
        guard let path = configuration.databasePath else {
            throw EncryptionError(.failed, database: name, reason: "an in-memory database has nothing on disk to encrypt")
        }
        let wasEncrypted = isEncrypted
        let started = ContinuousClock.now
        let report = try await accessGate.exclusive { () async throws -> RekeyReport in
            var fresh: DatabaseCipher?
            if let secret {
                do throws(EncryptionError) {
                    fresh = try DatabaseCipher.fresh(secret)
                } catch {
                    throw error.naming(name)
                }
            }
            let cipher = fresh
            let copy = path + "-rekey"
            Self.removeRekeyLeftovers(path: path)
            if let cipher { try cipher.install(path: copy) } else { DatabaseCipher.uninstall(path: copy) }
            defer { DatabaseCipher.uninstall(path: copy) }
            do {
                try await writer.writeWithoutTransaction { db in
                    let checkpoint = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                    if let row = checkpoint, let busy: Int = row[0], busy != 0 {
                        throw EncryptionError(.failed, database: self.name, reason: "the WAL could not be checkpointed")
                    }
                    if cipher != nil { try Self.reservePageSpace(db) }
                    try db.execute(sql: "VACUUM INTO ?", arguments: [copy])
                }
                try await BlockingPool.shared.perform { () throws in
                    try self.carryAttachmentKey(into: copy, encrypted: cipher != nil)
                    Self.syncFile(copy)
                }
            } catch {
                Self.removeRekeyLeftovers(path: path)
                throw error
            }
            // From here the old connections go; the copy replaces the file: closing,
            // renaming, fsyncing and opening are blocking work.
            return try await BlockingPool.shared.perform { () throws -> RekeyReport in
                do {
                    self.inlineReaders?.close()
                    self.checkpointer?.close()
                    try (self.writer as? DatabasePool)?.close()
                } catch {
                    Self.removeRekeyLeftovers(path: path)
                    throw error
                }
                for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                guard rename(copy, path) == 0 else {
                    let code = errno
                    try self.reopen(path: path, cipher: nil, keepKey: true)
                    throw EncryptionError(.failed, database: self.name, reason: "cannot replace the database file: errno \(code)")
                }
                Self.syncFile((path as NSString).deletingLastPathComponent)
                try self.reopen(path: path, cipher: cipher, keepKey: false)
                let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
                let paused = ContinuousClock.now - started
                return RekeyReport(
                    wasEncrypted: wasEncrypted, isEncrypted: cipher != nil, bytes: bytes,
                    pausedSeconds: Double(paused.components.seconds) + Double(paused.components.attoseconds) / 1e18)
            }
        }
        try await BlockingPool.shared.perform { () throws in try self.setUpAttachmentCipher(encrypted: report.isEncrypted) }
        logger.notice("\(name): rekeyed (\(wasEncrypted ? "encrypted" : "plain") → \(report.isEncrypted ? "encrypted" : "plain")), writes paused \(String(format: "%.3f", report.pausedSeconds)) s")
        return report
    }

    /// Opens the pool again on `path`: with `cipher`'s key installed, or (keepKey) with
    /// whatever key is installed now.
    private func reopen(path: String, cipher: DatabaseCipher?, keepKey: Bool) throws {
        if !keepKey {
            if let cipher { try cipher.install(path: path) } else { DatabaseCipher.uninstall(path: path) }
            encryptedState.withLock { $0 = cipher != nil }
        }
        let (pool, checkpointer) = try Self.openPool(path: path, configuration: configuration, encrypted: isEncrypted)
        try pool.writeWithoutTransaction { db in try accessTracker.install(on: db, tableSets: Self.allTableSets(db)) }
        writerBox.withLock { $0 = pool }
        checkpointerBox.withLock { $0 = checkpointer }
        readersBox.withLock { $0 = Self.inlineReaders(path: path, configuration, encrypted: isEncrypted) }
    }

    /// Writes the attachment key into the copy: an encrypted copy needs one (the current
    /// one if blobs are already encrypted); a plain copy keeps it only while encrypted
    /// blobs remain to be decrypted.
    private func carryAttachmentKey(into copy: String, encrypted: Bool) throws {
        let current = (blobs.cipher ?? blobs.readingCipher).map { $0.key.withUnsafeBytes { [UInt8]($0) } }
        let key = current ?? (encrypted ? DatabaseCipher.randomBytes(32) : nil)
        guard let key else { return }
        let queue = try DatabaseQueue(path: copy)
        try queue.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO info(key, value) VALUES (?, ?)",
                arguments: [Self.attachmentKeyName, key.map { String(format: "%02x", $0) }.joined()])
        }
        try queue.close()
    }

    static func syncFile(_ path: String) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return }
        fsync(fd)
        Glibc.close(fd)
    }
}
