import Blocking
import DocumentModel
import Foundation
import DocumentStore
import Testing
import TestSupport

/// A store used after `close()` (a replication still reading while its node stops)
/// answers with an error: it never reaches the closed SQLite connection, which crashed
/// the process ("Bad pointer dereference" in libsqlite3 under ChangesSender.readPage).
struct ClosedStoreTests {
    @Test(arguments: [true, false]) func readsAndWritesAfterCloseFailCleanly(inMemory: Bool) async throws {
        let test = try await TestStore.make(inMemory: inMemory)
        defer { test.directory.remove() }
        try await test.store.put("a", ["n": 1])
        #expect(try await test.store.metadata("a") != nil)
        await test.store.close()
        await #expect(throws: StoreError.self) { _ = try await test.store.metadata("a") }
        await #expect(throws: StoreError.self) { try await test.store.put("b", ["n": 2]) }
        await #expect(throws: StoreError.self) { _ = try await test.store.changesForSending(since: 0, limit: 10) }
    }

    /// `close() async` while a read runs returns at once; the connections close after
    /// the read (on the blocking pool), which still gets its answer.
    @Test func closingWhileAReadRunsReturnsAndClosesAfterIt() async throws {
        let test = try await TestStore.make()
        defer { test.directory.remove() }
        try await test.store.put("a", ["n": 1])
        let started = DispatchSemaphore(value: 0)
        let read = Task {
            try await test.store.auxiliaryRead { _ in
                started.signal()
                usleep(300_000)
                return 1
            }
        }
        await BlockingPool.shared.perform { started.wait() }
        await test.store.close()
        #expect(try await read.value == 1)
        await #expect(throws: StoreError.self) { _ = try await test.store.metadata("a") }
    }
}
