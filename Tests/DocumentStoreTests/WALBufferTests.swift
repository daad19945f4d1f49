import CSQLiteCrypt
import DocumentModel
@testable import DocumentStore
import Foundation
import GRDB
import Testing
import TestSupport

/// The VFS's WAL write buffer (CSQLiteCrypt/shoal_wal_buffer.c): a commit reaches the
/// file in a few large writes, every commit is in the file before another connection
/// can see it, and transactions that spill frames and roll back or rewrite them leave
/// a sound database.
@Suite(.serialized) struct WALBufferTests {
    /// A WAL pool of its own (through the Shoal VFS) with a small writer cache, so that
    /// large transactions spill frames to the WAL before they commit.
    static func pool(_ directory: TemporaryDirectory, synchronous: String) throws -> DatabasePool {
        #expect(shoal_crypt_register() == 0)
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = 20") }
        }
        let pool = try DatabasePool(path: directory.path + "/wal.sqlite", configuration: configuration)
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        }
        return pool
    }

    /// The writer connection's WAL writes: asked for by SQLite, handed to the file.
    static func stats(_ store: DocumentStore) async throws -> (taken: UInt64, issued: UInt64) {
        try await store.write { db in
            var taken: UInt64 = 0
            var issued: UInt64 = 0
            #expect(shoal_wal_buffer_connection_stats(db.sqliteConnection, &taken, &issued) == 1)
            return (taken, issued)
        }
    }

    @Test(arguments: [false, true])
    func aGroupCommitReachesTheFileInFewWrites(encrypted: Bool) async throws {
        let test = try await TestStore.make(durability: .normal, encryption: encrypted ? .key(Array(repeating: 5, count: 32)) : nil)
        defer { test.destroy() }
        try await test.store.put("first", ["n": 1])
        let updates = (0..<500).map { index in
            DocumentUpdate(
                docID: "doc-\(index)", body: ["i": .int(Int64(index)), "pad": .string(String(repeating: "p", count: 900))],
                mode: .edit(parent: nil))
        }
        let before = try await Self.stats(test.store)
        let results = try await test.store.save(batch: updates)
        let after = try await Self.stats(test.store)
        #expect(results.allSatisfy { (try? $0.get()) != nil })
        let taken = after.taken - before.taken
        let issued = after.issued - before.issued
        // 500 documents of 1 KB: a few hundred frames, two writes each, in a few writes.
        #expect(taken > 200)
        #expect(issued > 0)
        #expect(issued * 20 < taken, "\(taken) writes asked for, \(issued) issued")
    }

    @Test(arguments: ["NORMAL", "FULL", "OFF"])
    func everyCommitIsInTheFileBeforeOthersSeeIt(synchronous: String) async throws {
        let directory = TemporaryDirectory(prefix: "shoal-walbuf")
        defer { directory.remove() }
        let pool = try Self.pool(directory, synchronous: synchronous)
        let body = Data(repeating: 7, count: 3000)
        for index in 1...150 {
            // 1 to 40 rows per transaction: some commits fit in the cache, others spill first.
            let rows = 1 + (index * 7) % 40
            try await pool.write { db in
                for _ in 0..<rows { try db.execute(sql: "INSERT INTO t (body) VALUES (?)", arguments: [body]) }
            }
            let expected = try await pool.write { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") ?? -1 }
            // A reader has its own connection and its own handle on the WAL file.
            let seen = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") ?? -1 }
            let sum = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT sum(length(body)) FROM t") ?? -1 }
            #expect(seen == expected)
            #expect(sum == expected * 3000)
        }
        let integrity = try await pool.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") }
        #expect(integrity == "ok")
    }

    @Test func spilledFramesRolledBackOrRewrittenLeaveASoundDatabase() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-walbuf")
        defer { directory.remove() }
        var pool: DatabasePool? = try Self.pool(directory, synchronous: "NORMAL")
        let big = Data(repeating: 1, count: 200_000)
        // Spills (more pages than the cache holds), then rolls back.
        try await pool!.writeWithoutTransaction { db in
            try db.inTransaction {
                for _ in 0..<20 { try db.execute(sql: "INSERT INTO t (body) VALUES (?)", arguments: [big]) }
                return .rollback
            }
        }
        // Spills, rewrites the same rows again in the same transaction, commits.
        try await pool!.write { db in
            for _ in 0..<20 { try db.execute(sql: "INSERT INTO t (body) VALUES (?)", arguments: [big]) }
            try db.execute(sql: "UPDATE t SET body = zeroblob(1000) WHERE id % 2 = 0")
        }
        let (count, sum) = try await pool!.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM t"), try Int.fetchOne(db, sql: "SELECT sum(length(body)) FROM t"))
        }
        #expect(count == 20)
        #expect(sum == 10 * 200_000 + 10 * 1000)
        // Reopened from the files alone (the WAL replayed), the same.
        try pool!.close()
        pool = nil
        let reopened = try DatabasePool(path: directory.path + "/wal.sqlite")
        let (integrity, total) = try await reopened.read { db in
            (try String.fetchOne(db, sql: "PRAGMA integrity_check"), try Int.fetchOne(db, sql: "SELECT sum(length(body)) FROM t"))
        }
        #expect(integrity == "ok")
        #expect(total == 10 * 200_000 + 10 * 1000)
    }
}
