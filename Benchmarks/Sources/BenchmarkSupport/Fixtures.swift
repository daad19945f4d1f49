import DocumentModel
import DocumentStore
import Foundation
import GRDB
import Logging

/// A fresh directory under the system temporary directory, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(_ label: String) throws {
        let base = FileManager.default.temporaryDirectory.path
        path = (base as NSString).appendingPathComponent("shoal-bench-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}


/// The physical-limit baseline: plain GRDB inserts of pre-encoded bodies into
/// `raw(id TEXT PRIMARY KEY, body BLOB)` in a WAL `DatabasePool` on a temporary
/// file, with the same `PRAGMA synchronous` as the store it is compared with.
public final class RawSQLiteFixture: Sendable {
    public let directory: TemporaryDirectory
    public let pool: DatabasePool
    let insertSQL = "INSERT INTO raw(id, body) VALUES (?, ?)"

    public init(durability: StoreConfiguration.Durability) throws {
        directory = try TemporaryDirectory("raw-\(durability.rawValue)")
        var config = Configuration()
        let synchronous = durability.synchronousPragma
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
        }
        pool = try DatabasePool(path: (directory.path as NSString).appendingPathComponent("raw.sqlite3"),
                                configuration: config)
        // GRDB turns WAL on after `prepareDatabase` and sets the writer to NORMAL then:
        // set the writer's level again, as DocumentStore does.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE raw(id TEXT PRIMARY KEY, body BLOB)")
        }
        // Sanity check: the pool is really in WAL mode and its writer at the requested level.
        let (journal, sync) = try pool.writeWithoutTransaction { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "?",
             try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1)
        }
        precondition(journal == "wal", "raw baseline must use WAL, got \(journal)")
        precondition(sync == (durability == .full ? 2 : 1), "raw baseline synchronous mismatch: \(sync)")
    }

    /// Inserts every `(id, body)` in ONE transaction through one cached statement.
    public func insertBatch(ids: [String], body: Data) async throws {
        let sql = insertSQL
        try await pool.write { db in
            let statement = try db.cachedStatement(sql: sql)
            for id in ids {
                try statement.execute(arguments: [id, body])
            }
        }
    }

    /// Inserts one row in its own transaction (one commit, one fsync with FULL).
    public func insertSingle(id: String, body: Data) async throws {
        let sql = insertSQL
        try await pool.write { db in
            try db.cachedStatement(sql: sql).execute(arguments: [id, body])
        }
    }

    public func close() {
        try? pool.close()
        directory.remove()
    }
}

/// A `DocumentStore` in a fresh temporary directory.
public final class StoreFixture: Sendable {
    public let directory: TemporaryDirectory
    public let store: DocumentStore

    /// A store in a fresh directory; with `encryption`, an encrypted one.
    public init(durability: StoreConfiguration.Durability, encryption: EncryptionKey? = nil) throws {
        directory = try TemporaryDirectory("store-\(durability.rawValue)")
        var logger = Logger(label: "bench.store")
        logger.logLevel = .warning
        store = try DocumentStore(
            configuration: StoreConfiguration(
                name: "bench", location: .directory(directory.path), durability: durability, encryption: encryption),
            logger: logger)
    }

    /// New-document updates (`.edit(parent: nil)`) of the sample body.
    public static func newDocuments(_ ids: [String]) -> [DocumentUpdate] {
        ids.map { DocumentUpdate(docID: $0, body: SampleBody.properties, mode: .edit(parent: nil)) }
    }

    /// Saves a batch in one call and checks that every document was written.
    public func saveBatch(_ updates: [DocumentUpdate]) async throws {
        let results = try await store.save(batch: updates)
        for result in results {
            _ = try result.get()
        }
    }

    public func close() {
        store.close()
        directory.remove()
    }
}

/// Wall-clock rate helper: `count` operations over `elapsed`.
public func ratePerSecond(_ count: Int, _ elapsed: Duration) -> Int {
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    guard seconds > 0 else { return 0 }
    return Int((Double(count) / seconds).rounded())
}

/// Per-benchmark mutable state shared by its setup, iterations and teardown
/// (which ordo-one/benchmark runs one after the other, never concurrently).
public final class BenchmarkState<Fixture>: @unchecked Sendable {
    public var fixture: Fixture?
    public var ids: DocumentIDGenerator
    /// Free for the benchmark's own bookkeeping (e.g. counting iterations).
    public var iteration = 0

    public init(seed: UInt64) {
        ids = DocumentIDGenerator(seed: seed)
    }

    /// The fixture made by setup; a benchmark that runs without it is a bug.
    public var current: Fixture {
        guard let fixture else { fatalError("benchmark fixture missing: setup did not run") }
        return fixture
    }
}

/// Logs only warnings and errors (to stderr), once per process, so that a node
/// started by a benchmark does not print a line per request.
public enum QuietLogging {
    private static let bootstrapped: Bool = {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        return true
    }()

    public static func bootstrap() {
        _ = bootstrapped
    }
}

/// A benchmark run whose result is wrong (a failed request, missing documents).
public struct BenchmarkFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
