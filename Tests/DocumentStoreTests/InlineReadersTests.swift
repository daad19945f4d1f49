import DocumentModel
@testable import DocumentStore
import Foundation
import GRDB
import Testing
import TestSupport

/// Reads run on the store's inline connections (on the calling thread) when one is
/// free, fall back to the pool's readers when none is, see every committed write, and
/// follow the file through a rekey.
@Suite struct InlineReadersTests {
    /// Whether a store read runs on an inline connection: some read of a few does (a read
    /// of another test may hold the process's permit for a moment: then the read takes
    /// the pool).
    static func readsInline(_ store: DocumentStore) async throws -> Bool {
        for _ in 0..<200 {
            if try await store.read({ db in db.configuration.label ?? "" }).hasSuffix(".inline") { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return false
    }

    @Test func aReadRunsOnAnInlineConnectionAndAScanOnThePool() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        #expect(try await Self.readsInline(test.store))
        let scanned = try await test.store.scan { db in db.configuration.label ?? "" }
        #expect(!scanned.hasSuffix(".inline"))
        #expect(test.store.inlineReaders?.openCount == 1)
    }

    @Test func everyCommittedWriteIsVisibleToTheNextRead() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        var parent: RevID?
        for n in 1...50 {
            parent = try await store.put("doc", ["n": .number(Double(n))], parent: parent).revID
            let (_, read) = try await store.revision("doc")
            #expect(read.body?["n"] == .number(Double(n)))
        }
    }

    @Test func readsFollowTheFileThroughARekey() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        try await store.put("before", ["n": 1])
        _ = try await store.rekey(to: .key(Array(repeating: 7, count: 32)))
        try await store.put("after", ["n": 2])
        #expect(try await Self.readsInline(store))
        #expect(try await store.metadata("before") != nil)
        #expect(try await store.metadata("after") != nil)
        _ = try await store.rekey(to: nil)
        #expect(try await store.metadata("after") != nil)
        #expect(try await Self.readsInline(store))
    }

    @Test func anEncryptedStoreReadsInline() async throws {
        let test = try await TestStore.make(encryption: .key(Array(repeating: 9, count: 32)))
        defer { test.destroy() }
        try await test.store.put("doc", ["n": 1])
        #expect(try await Self.readsInline(test.store))
        #expect(try await test.store.metadata("doc") != nil)
    }

    @Test func whenEveryConnectionIsBusyTheCallerIsToldAtOnce() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let path = try #require(test.store.configuration.databasePath)
        let readers = InlineReaders(path: path, configuration: Configuration(), limit: 2, permits: .init(3))
        let innermost = try readers.withConnection { _ in
            try readers.withConnection { _ in try readers.withConnection { _ in 1 } }
        }
        #expect(innermost == .some(.some(nil)))
        #expect(readers.openCount == 2)
        // Permits run out before connections do.
        let few = InlineReaders(path: path, configuration: Configuration(), limit: 4, permits: .init(1))
        #expect(try few.withConnection { _ in try few.withConnection { _ in 1 } } == .some(nil))
        #expect(few.openCount == 1)
        // Both given back: the next read takes an idle one without opening a third.
        #expect(try readers.withConnection { queue in try queue.read { db in try Int.fetchOne(db, sql: "SELECT 1") } } == 1)
        #expect(readers.openCount == 2)
    }

    @Test func closedReadersRefuseAndCloseABusyConnectionWhenItIsGivenBack() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let path = try #require(test.store.configuration.databasePath)
        let readers = InlineReaders(path: path, configuration: Configuration(), limit: 2, permits: .init(3))
        _ = try readers.withConnection { _ in try readers.withConnection { _ in 0 } }
        let during = try readers.withConnection { _ in
            readers.close()
            return readers.openCount
        }
        #expect(during == 2 - 1)
        #expect(readers.openCount == 0)
        #expect(try readers.withConnection { _ in 1 } == nil)
    }
}
