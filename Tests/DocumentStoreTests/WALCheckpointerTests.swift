import DocumentModel
@testable import DocumentStore
import Foundation
import GRDB
import Testing
import TestSupport

/// The WAL is checkpointed in the background once it passes the threshold, stays
/// bounded, loses nothing, and a store's checkpointer follows the file through a rekey.
@Suite struct WALCheckpointerTests {
    /// A WAL pool on a fresh file with a checkpointer of small limits on its writer.
    static func pool(
        _ directory: TemporaryDirectory, threshold: Int32, backstop: Int32
    ) throws -> (DatabasePool, WALCheckpointer, String) {
        let path = directory.path + "/wal.sqlite"
        let pool = try DatabasePool(path: path)
        let checkpointer = WALCheckpointer(path: path, configuration: Configuration(), threshold: threshold, backstop: backstop)
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, body BLOB)")
            checkpointer.install(on: db)
        }
        return (pool, checkpointer, path)
    }

    static func walSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size]) as? Int) ?? 0
    }

    @Test func checkpointsInTheBackgroundAndKeepsTheWALBounded() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (pool, checkpointer, path) = try Self.pool(directory, threshold: 50, backstop: 200)
        let body = Data(repeating: 7, count: 3000)
        // 600 transactions of 4 rows (a page each and the table's interior pages):
        // about 3,000 frames, fifteen times the backstop.
        for transaction in 0..<600 {
            try pool.write { db in
                for row in 0..<4 {
                    try db.execute(sql: "INSERT INTO t(id, body) VALUES (?, ?)", arguments: [transaction * 4 + row, body])
                }
            }
        }
        #expect(checkpointer.runs > 0)
        // Without checkpoints (the hook replaces SQLite's own) the WAL would hold every
        // frame: about 3,000 pages of 4 KB. The writer's backstop checkpoint gives way
        // (busy) while a background one runs, so the WAL may pass the backstop: on a
        // loaded two-core machine (a full test run) by up to 4× (3.27 MB seen), and by
        // 6.5× with a compiler on both cores beside the run (5.32 MB). Still well below
        // the ~12.4 MB of every frame.
        let frameSize = 4096 + 24
        #expect(Self.walSize(path) < 9 * 200 * frameSize, "WAL \(Self.walSize(path)) bytes")
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 2400)
        checkpointer.close()
        try pool.close()
        let reopened = try DatabaseQueue(path: path)
        #expect(try reopened.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 2400)
    }

    /// The phases: threshold → background; done → the writer copies the tail; backstop
    /// → the writer at once, whatever the phase.
    @Test func phases() {
        var phase = CheckpointPhase()
        #expect(phase.committed(frames: 10, threshold: 100, backstop: 400) == .none)
        #expect(phase.committed(frames: 120, threshold: 100, backstop: 400) == .schedule)
        #expect(phase.step == .background)
        #expect(phase.committed(frames: 150, threshold: 100, backstop: 400) == .none)
        #expect(phase.committed(frames: 400, threshold: 100, backstop: 400) == .checkpointHere)
        phase.backgroundDone()
        #expect(phase.step == .tail)
        #expect(phase.committed(frames: 410, threshold: 100, backstop: 400) == .checkpointHere)
        #expect(phase.step == .idle)
        #expect(phase.committed(frames: 5, threshold: 100, backstop: 400) == .none)
        #expect(phase.committed(frames: 900, threshold: 100, backstop: 400) == .checkpointHere)
        phase.backgroundDone()
        #expect(phase.step == .idle)
    }

    @Test func belowTheThresholdNothingIsCopied() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (pool, checkpointer, _) = try Self.pool(directory, threshold: 10_000, backstop: 40_000)
        for id in 0..<50 {
            try pool.write { db in try db.execute(sql: "INSERT INTO t(id, body) VALUES (?, zeroblob(100))", arguments: [id]) }
        }
        #expect(checkpointer.runs == 0)
        checkpointer.close()
        try pool.close()
    }

    @Test func aClosedCheckpointerSchedulesNothingAndTheBackstopStillHolds() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (pool, checkpointer, path) = try Self.pool(directory, threshold: 20, backstop: 100)
        checkpointer.close()
        let body = Data(repeating: 1, count: 3000)
        for id in 0..<1000 {
            try pool.write { db in try db.execute(sql: "INSERT INTO t(id, body) VALUES (?, ?)", arguments: [id, body]) }
        }
        #expect(checkpointer.runs == 0)
        #expect(Self.walSize(path) < 140 * (4096 + 24), "WAL \(Self.walSize(path)) bytes")
        try pool.close()
    }

    /// An encrypted store past the threshold: the background connection goes through
    /// the encrypting VFS with the file's key; everything reads back after a reopen.
    @Test func anEncryptedStoreCheckpointsInTheBackground() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let key = EncryptionKey.key(Array(repeating: 0x3C, count: 32))
        let configuration = StoreConfiguration(
            name: "db", location: .directory(directory.path), durability: .normal, encryption: key)
        let store = try DocumentStore(configuration: configuration)
        let pad = JSON.string(String(repeating: "x", count: 3000))
        // ≈ 12,000 pages: past the 8,000-frame threshold once.
        for batch in 0..<12 {
            let updates = (0..<1000).map { n in
                DocumentUpdate(docID: "d\(batch)-\(n)", body: ["n": .number(Double(n)), "pad": pad], mode: .edit(parent: nil))
            }
            for result in try await store.save(batch: updates) { _ = try result.get() }
        }
        let checkpointer = try #require(store.checkpointer)
        for _ in 0..<200 where checkpointer.runs == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(checkpointer.runs > 0)
        #expect(try await store.integrityCheck() == ["ok"])
        await store.close()
        let reopened = try DocumentStore(configuration: configuration)
        defer { reopened.close() }
        #expect(reopened.info().docCount == 12_000)
        #expect(try await reopened.integrityCheck() == ["ok"])
        #expect(try await reopened.revision("d11-999").1.body?["n"] == .number(999))
    }

    @Test func aStoreOnAFileHasOneAndARekeyReplacesIt() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let before = try #require(test.store.checkpointer)
        #expect(before.threshold == Int32(DocumentStore.walAutocheckpointPages))
        try await test.store.put("a", ["v": 1])
        _ = try await test.store.rekey(to: .key(Array(repeating: 7, count: 32)))
        let after = try #require(test.store.checkpointer)
        #expect(after !== before)
        try await test.store.put("b", ["v": 2])
        #expect(try await test.store.revision("a").1.body?["v"] == 1)
        let memory = try await TestStore.make(inMemory: true)
        defer { memory.destroy() }
        #expect(memory.store.checkpointer == nil)
    }
}
