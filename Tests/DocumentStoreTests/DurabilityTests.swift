@testable import DocumentStore
import GRDB
import Testing
import TestSupport

/// `durability` reaches the connection that commits: GRDB's pool sets its writer to
/// `synchronous = NORMAL` when it turns WAL on, after the store's `prepareDatabase`, so a
/// `full` database committed without any fsync until the store set the level again.
@Suite struct DurabilityTests {
    /// The writer's and a reader's `PRAGMA synchronous` (0 OFF, 1 NORMAL, 2 FULL).
    static func levels(_ store: DocumentStore) async throws -> (writer: Int, reader: Int) {
        let writer = try await store.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
        let reader = try await store.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
        return (writer, reader)
    }

    @Test(arguments: [(StoreConfiguration.Durability.full, 2), (.normal, 1)])
    func theWriterCommitsAtTheConfiguredLevel(durability: StoreConfiguration.Durability, level: Int) async throws {
        let test = try await TestStore.make(durability: durability)
        defer { test.destroy() }
        let store = test.store
        try await store.put("doc", ["n": 1])
        let levels = try await Self.levels(store)
        #expect(levels.writer == level)
        #expect(levels.reader == level)
    }

    @Test func aRekeyedDatabaseKeepsItsLevel() async throws {
        let test = try await TestStore.make(durability: .full)
        defer { test.destroy() }
        let store = test.store
        try await store.put("doc", ["n": 1])
        _ = try await store.rekey(to: .key(Array(repeating: 7, count: 32)))
        #expect(try await Self.levels(store).writer == 2)
    }
}
