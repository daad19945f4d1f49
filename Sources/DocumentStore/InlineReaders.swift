import Foundation
import GRDB
import Synchronization

/// A few read-only connections to a store's file, owned by the store and used only by
/// reads that run on the calling thread (`DocumentStore.read`).
///
/// GRDB's asynchronous read hops to a reader's queue and back (four context switches,
/// most of a small read's CPU). A read on one of these connections runs its body on the
/// caller's thread instead. It never waits: when every connection is busy (or the store
/// is closing) `withConnection` returns nil and the caller takes the pool's asynchronous
/// read, which suspends rather than blocks. A connection is held only while its body
/// runs on a thread, never across a suspension, so no thread of Swift's cooperative pool
/// ever waits for a task to give one back (the deadlock that sinks a synchronous read on
/// the pool's own readers).
final class InlineReaders: Sendable {
    private struct State {
        var idle: [DatabaseQueue] = []
        var opened = 0
        var closed = false
    }

    private enum Take { case idle(DatabaseQueue), open, none }

    private let state = Mutex(State())
    private let limit: Int
    private let path: String
    private let configuration: Configuration
    private let permits: Permits

    /// Connections to `path`, opened lazily (at most `limit`) with `configuration` made
    /// read-only; reads on them run only when one of `permits` is free.
    init(path: String, configuration: Configuration, limit: Int, permits: Permits = .process) {
        var readOnly = configuration
        readOnly.readonly = true
        readOnly.label = (configuration.label ?? "shoal") + ".inline"
        self.path = path
        self.configuration = readOnly
        self.limit = limit
        self.permits = permits
    }

    /// How many connections one store keeps: one per core (as many reads as can run at
    /// once on Swift's cooperative pool), at least two.
    static var defaultLimit: Int { max(2, ProcessInfo.processInfo.activeProcessorCount) }

    /// How many inline reads may run at once, over every store that shares them.
    final class Permits: Sendable {
        private let left: Atomic<Int>

        init(_ count: Int) { left = Atomic(count) }

        /// The process's: half the cooperative pool's threads (at least one), so that
        /// SQLite work never holds all of them. When more reads run at once (a process
        /// with many busy databases), the rest take the pool's readers on threads of
        /// their own.
        static let process = Permits(max(1, ProcessInfo.processInfo.activeProcessorCount / 2))

        /// Takes a permit if one is left.
        func take() -> Bool {
            var count = left.load(ordering: .relaxed)
            while count > 0 {
                let (exchanged, original) = left.compareExchange(expected: count, desired: count - 1, ordering: .acquiring)
                if exchanged { return true }
                count = original
            }
            return false
        }

        func giveBack() { left.wrappingAdd(1, ordering: .releasing) }
    }

    /// Runs `body` on a free connection (opening one if fewer than `limit` are open), on
    /// the calling thread; nil when none is free, as many inline reads run as `permits`
    /// allow or the readers are closed.
    func withConnection<T>(_ body: (DatabaseQueue) throws -> T) throws -> T? {
        guard permits.take() else { return nil }
        defer { permits.giveBack() }
        let take: Take = state.withLock { state in
            if state.closed { return .none }
            if let queue = state.idle.popLast() { return .idle(queue) }
            guard state.opened < limit else { return .none }
            state.opened += 1
            return .open
        }
        let queue: DatabaseQueue
        switch take {
        case .none: return nil
        case .idle(let idle): queue = idle
        case .open:
            do {
                queue = try DatabaseQueue(path: path, configuration: configuration)
            } catch {
                // A connection that cannot open now will not open on the next read
                // either: reads keep to the pool's asynchronous ones from here.
                state.withLock { state in
                    state.opened -= 1
                    state.closed = true
                }
                return nil
            }
        }
        defer { giveBack(queue) }
        return try body(queue)
    }

    private func giveBack(_ queue: DatabaseQueue) {
        let keep = state.withLock { state in
            if state.closed {
                state.opened -= 1
                return false
            }
            state.idle.append(queue)
            return true
        }
        if !keep { try? queue.close() }
    }

    /// How many connections are open (busy or idle).
    var openCount: Int { state.withLock { $0.opened } }

    /// Closes the idle connections; a busy one closes when its read ends. No read uses
    /// the readers afterwards.
    func close() {
        let idle = state.withLock { state in
            state.closed = true
            state.opened -= state.idle.count
            defer { state.idle = [] }
            return state.idle
        }
        for queue in idle { try? queue.close() }
    }
}
