import Blocking
import DocumentModel
import Foundation
import GRDB
import Logging
import Synchronization

/// One database: its SQLite file (documents, revision trees, bodies, sequences, local
/// documents), its attachment blobs, and the notifications of new changes.
///
/// Every write is one SQLite transaction and is durable when the call returns.
/// Reads run concurrently with writes (WAL).
public final class DocumentStore: Sendable {
    public let configuration: StoreConfiguration
    public let blobs: BlobStore
    /// The collection this store holds (`_default._default` for the database itself).
    public let collection: CollectionName
    /// For a named collection, the store of the database's default collection, whose
    /// file, connections, gate, blobs and principals it shares (nil: this is it).
    let base: DocumentStore?
    /// The collection's number in the `collections` table (0: the default collection),
    /// which picks its tables (`Tables`).
    let tableSet: Int
    /// The named collections opened so far (on the default collection's store).
    let namedCollections = Mutex<[CollectionName: DocumentStore]>([:])
    /// The SQLite connections (replaced by a rekey, under `gate`).
    let writerBox: Mutex<any DatabaseWriter>
    var writer: any DatabaseWriter { base?.writer ?? writerBox.withLock { $0 } }
    /// The read-only connections of reads on the calling thread, for a file (nil in
    /// memory); replaced with the pool by a rekey.
    let readersBox: Mutex<InlineReaders?>
    var inlineReaders: InlineReaders? { base?.inlineReaders ?? readersBox.withLock { $0 } }
    /// The background checkpoints of the file (nil in memory); replaced with the pool by
    /// a rekey.
    let checkpointerBox: Mutex<WALCheckpointer?>
    var checkpointer: WALCheckpointer? { base?.checkpointer ?? checkpointerBox.withLock { $0 } }
    /// Every access runs shared; a rekey runs exclusive.
    let accessGate: StoreGate
    /// Moves on with every commit that changes principals or grants (the database's).
    let accessTracker: AccessGeneration
    let encryptedState: Mutex<Bool>
    let logger: Logger
    let notifier: ChangeNotifier
    /// Cached counters (`last_seq`, `doc_count`) mirrored from the `meta` table;
    /// only touched inside write transactions.
    let counters: Mutex<Counters>
    /// The gate new revisions pass through (access control), if installed.
    let gateBox = Mutex<(any RevisionGate)?>(nil)
    /// The database's version source and hybrid logical clock (shared by its collections).
    let versionClock: VersionClock
    /// Set while the nemesis makes the disk look full (`setDiskFullFault`).
    let diskFullFault = Atomic<Bool>(false)

    struct Counters {
        var lastSequence: UInt64
        var docCount: Int64
        var purgeSequence: Int64 = 0
    }

    /// The writer connection's page cache, in KiB (SQLite's default is 2000).
    static let writerCacheKiB = 16_384
    /// WAL pages after which a commit checkpoints (SQLite's default is 1000): in the
    /// background (`WALCheckpointer`) for a file, in the commit in memory.
    static let walAutocheckpointPages = 8_000
    /// WAL pages at which the writer checkpoints itself when the background checkpoints
    /// have not kept the WAL below (`WALCheckpointer`).
    static let walBackstopPages = 4 * walAutocheckpointPages

    public var name: String { configuration.name }
    /// This database's identity, created with it and never changed.
    public let uuid: String

    /// Opens (creating if needed) the database described by `configuration`.
    public init(configuration: StoreConfiguration, logger: Logger = Logger(label: "CRUD")) throws {
        self.configuration = configuration
        self.logger = logger
        collection = .default
        base = nil
        tableSet = 0
        accessGate = StoreGate()
        let writer: any DatabaseWriter
        var encrypted = configuration.encryption != nil
        var checkpointer: WALCheckpointer?
        if let path = configuration.databasePath {
            let opened = try Self.openFile(path: path, configuration: configuration)
            writer = opened.0
            encrypted = opened.1 != nil
            checkpointer = opened.2
        } else {
            writer = try DatabaseQueue(configuration: Self.connectionConfiguration(configuration, encrypted: false))
        }
        writerBox = Mutex(writer)
        checkpointerBox = Mutex(checkpointer)
        encryptedState = Mutex(encrypted)
        readersBox = Mutex(configuration.databasePath.map { Self.inlineReaders(path: $0, configuration, encrypted: encrypted) })
        try Self.migrator.migrate(writer)
        versionClock = try VersionClock.load(writer, configured: configuration.versionSource)
        let tracker = AccessGeneration()
        try writer.writeWithoutTransaction { db in try tracker.install(on: db, tableSets: Self.allTableSets(db)) }
        accessTracker = tracker
        blobs = try BlobStore(
            directory: configuration.attachmentDirectory, syncToDisk: configuration.durability == .full)
        uuid = try writer.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM \(Tables.info) WHERE key = 'uuid'") ?? ""
        }
        let loaded = try writer.read { db in
            Counters(
                lastSequence: UInt64(try Self.meta(db, "last_seq")),
                docCount: try Self.meta(db, "doc_count"),
                purgeSequence: try Self.meta(db, "purge_seq"))
        }
        counters = Mutex(loaded)
        notifier = ChangeNotifier(latest: loaded.lastSequence)
        try setUpAttachmentCipher(encrypted: encrypted)
    }

    /// Opens the named collection `collection` of `base` (the default collection's
    /// store), whose tables must exist (`collection(_:)` creates them).
    init(collection: CollectionName, number: Int, base: DocumentStore) throws {
        configuration = base.configuration
        logger = base.logger
        self.collection = collection
        self.base = base
        tableSet = number
        accessGate = base.accessGate
        accessTracker = base.accessTracker
        versionClock = base.versionClock
        blobs = base.blobs
        writerBox = Mutex(base.writer)
        readersBox = Mutex(nil)
        checkpointerBox = Mutex(nil)
        encryptedState = Mutex(base.encryptedState.withLock { $0 })
        let loaded = try base.writer.read { db in
            try Tables.with(number) {
                (try String.fetchOne(db, sql: "SELECT value FROM \(Tables.info) WHERE key = 'uuid'") ?? "",
                 Counters(
                    lastSequence: UInt64(try Self.meta(db, "last_seq")),
                    docCount: try Self.meta(db, "doc_count"),
                    purgeSequence: try Self.meta(db, "purge_seq")))
            }
        }
        uuid = loaded.0
        counters = Mutex(loaded.1)
        notifier = ChangeNotifier(latest: loaded.1.lastSequence)
    }

    /// Closes the database; pending notifications streams finish. Closing a named
    /// collection only ends its notifications (the database's store owns the file).
    /// The connections close on the calling thread: from async code, use `close() async`.
    public func close() {
        guard let closeConnections = beginClose() else { return }
        accessGate.close(then: closeConnections)
    }

    /// `close()` for async code: closing the connections (a last WAL checkpoint, waiting
    /// for a background one, fsyncs) runs on the blocking pool, and this returns once it
    /// is done. When an access still runs, they close after it, and this returns at once.
    public func close() async {
        guard let closeConnections = beginClose() else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // Resumed once: when the connections closed, or at once when they close later
            // (then the closing runs after the last access, and must not resume again).
            let waiter = ResumeOnce(continuation)
            let now = accessGate.close {
                BlockingPool.shared.execute {
                    closeConnections()
                    waiter.resume()
                }
            }
            if !now { waiter.resume() }
        }
    }

    /// Finishes the notifications; returns what closes the connections (nil for a named
    /// collection, whose file the database's store owns). No read or write reaches the
    /// connections once they are closed (a replication still reading at shutdown gets an
    /// error, not a closed SQLite handle): they close when the last running access ends.
    private func beginClose() -> (@Sendable () -> Void)? {
        notifier.finish()
        guard base == nil else { return nil }
        for named in namedCollections.withLock({ Array($0.values) }) { named.notifier.finish() }
        let (blobs, readers, checkpointer, path, writer) = (blobs, inlineReaders, checkpointer, configuration.databasePath, writer)
        return {
            blobs.close()
            readers?.close()
            checkpointer?.close()
            if let path { DatabaseCipher.uninstall(path: path) }
            if let pool = writer as? DatabasePool {
                try? pool.close()
            } else if let queue = writer as? DatabaseQueue {
                try? queue.close()
            }
        }
    }

    /// Document count (live documents), latest sequence, and how many purges changed
    /// something.
    public func info() -> (docCount: Int, updateSequence: UInt64, purgeSequence: Int) {
        counters.withLock { (Int($0.docCount), $0.lastSequence, Int($0.purgeSequence)) }
    }

    /// The latest sequence assigned (its transaction may still be committing).
    public var lastSequence: UInt64 { counters.withLock { $0.lastSequence } }

    /// The latest sequence whose transaction has committed: every change at or below
    /// it is visible to reads started from now on.
    public var committedSequence: UInt64 { notifier.latest }

    /// How many committed transactions have changed the database's principals or grants
    /// (any collection's) since the store opened (`AccessGeneration`): access computed
    /// from them stays valid while this reads what it read before the computation.
    public var accessGeneration: UInt64 { accessTracker.current }

    /// A stream of the latest sequence, yielded after every committed change. It
    /// first yields the current sequence.
    public func sequenceUpdates() -> AsyncStream<UInt64> {
        notifier.subscribe()
    }

    /// Waits until a change after `sequence` is committed (true), or `timeout`
    /// passes, the task is cancelled or the store closes (false).
    public func waitForChange(after sequence: UInt64, timeout: Duration) async -> Bool {
        await notifier.wait(after: sequence, timeout: timeout)
    }

    /// Runs a write transaction, turning database failures into `StoreError`s.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        if hasDiskFullFault { throw StoreError.injectedDiskFull }
        do {
            let tables = tableSet
            let result = try await accessGate.sharedIfOpen { try await writer.write { db in try Tables.with(tables) { try body(db) } } }
            return result
        } catch let error as StoreError {
            throw error
        } catch is CancellationError {
            // The caller went away (e.g. a replication connection closed). Counters need
            // no repair: a transaction that changed them and rolled back restored them in
            // its rollback hook, on the writer queue. (Re-reading them here, off that
            // queue, could move the sequence backwards under a concurrent commit.)
            throw StoreError(.storage, reason: "cancelled")
        } catch {
            logger.error("write failed: \(error)")
            await reloadCounters()
            throw StoreError.storage(error, path: configuration.databasePath)
        }
    }

    /// After a transaction that failed in SQLite itself (a full disk failing the COMMIT,
    /// an I/O error): SQLite may have rolled it back without calling the rollback hook,
    /// so the in-memory counters are read again from the `meta` table, on the writer's
    /// queue (no commit can interleave), where every committed transaction saved them.
    func reloadCounters() async {
        let tables = tableSet
        try? await writer.writeWithoutTransaction { db in
            let loaded = try Tables.with(tables) {
                Counters(
                    lastSequence: UInt64(try Self.meta(db, "last_seq")),
                    docCount: try Self.meta(db, "doc_count"),
                    purgeSequence: try Self.meta(db, "purge_seq"))
            }
            self.counters.withLock { $0 = loaded }
        }
    }

    /// Runs a read transaction, on the calling thread when one of the store's inline
    /// connections is free (`InlineReaders`: no thread hand-off, most of a small read's
    /// cost), else as the pool's asynchronous read. For reads the caller bounds (a key,
    /// a batch, a page with a limit); a read whose size nobody bounds goes through
    /// `scan` so that it does not hold a thread of Swift's cooperative pool for long.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        let tables = tableSet
        let readers = inlineReaders
        return try await reading {
            try Task.checkCancellation()
            if let readers, let result = try readers.withConnection({ queue in
                try queue.read { db in try Tables.with(tables) { try body(db) } }
            }) {
                return result
            }
            return try await self.writer.read { db in try Tables.with(tables) { try body(db) } }
        }
    }

    /// Runs a read transaction on one of the pool's readers while the caller's task is
    /// suspended: for reads of unbounded size (a whole feed, every document, views,
    /// integrity checks).
    func scan<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        let tables = tableSet
        return try await reading { try await self.writer.read { db in try Tables.with(tables) { try body(db) } } }
    }

    /// The most documents a read by keys may name and still run inline (`read`); a
    /// page-sized one (`documents(keys)`, `_revs_diff`, a view's batch) goes through `scan`,
    /// so that no cooperative thread holds a SQLite read for long.
    static let inlineReadKeys = 16

    /// `read` when the caller bounds the result (`bounded`), else `scan`.
    func read<T: Sendable>(bounded: Bool, _ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        bounded ? try await read(body) : try await scan(body)
    }

    /// A read as one shared access of the store (a rekey waits for it), its failures as `StoreError`s.
    private func reading<T: Sendable>(_ run: () async throws -> T) async throws(StoreError) -> T {
        do {
            return try await accessGate.sharedIfOpen { try await run() }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.storage(error)
        }
    }

    /// The inline readers of the file at `path` (`InlineReaders`).
    static func inlineReaders(path: String, _ configuration: StoreConfiguration, encrypted: Bool) -> InlineReaders {
        InlineReaders(
            path: path, configuration: connectionConfiguration(configuration, encrypted: encrypted),
            limit: InlineReaders.defaultLimit)
    }

    static func meta(_ db: Database, _ key: String) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT value FROM \(Tables.meta) WHERE key = ?", arguments: [key]) ?? 0
    }
}

extension DocumentStore {
    /// Bytes on disk of the SQLite file and its WAL (0 in memory).
    public var fileSize: Int {
        guard let path = configuration.databasePath else { return 0 }
        return [path, path + "-wal"].reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        }
    }
}

/// A continuation resumed at most once, by whichever of two paths comes first.
private final class ResumeOnce: Sendable {
    private let continuation: Mutex<CheckedContinuation<Void, Never>?>

    init(_ continuation: CheckedContinuation<Void, Never>) {
        self.continuation = Mutex(continuation)
    }

    func resume() {
        continuation.withLock { $0.take() }?.resume()
    }
}
