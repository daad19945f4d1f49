import Synchronization

/// Lets every database access run concurrently, until one operation needs the database
/// to itself (a rekey swaps the SQLite file under the connections): then new accesses
/// wait, the running ones finish, the exclusive operation runs, and the waiters go on.
/// Once the store closes, accesses are refused (a `StoreError`) instead of reaching a
/// closed SQLite connection, which would crash the process.
final class StoreGate: Sendable {
    private struct State {
        var closed = false
        /// What closes the connections, once no access runs (set by `close`).
        var onDrained: (@Sendable () -> Void)?
        var active = 0
        var exclusive = false
        var waiting: [CheckedContinuation<Void, Never>] = []
        var drained: CheckedContinuation<Void, Never>?
        var exclusiveQueue: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Runs `body` as one shared access.
    func shared<T>(_ body: () async throws -> T) async rethrows -> T {
        await enter()
        defer { leave() }
        return try await body()
    }

    /// Runs `body` as one shared access, or throws `StoreError` `.unavailable` when the
    /// store has closed.
    func sharedIfOpen<T>(_ body: () async throws -> T) async throws -> T {
        await enter()
        defer { leave() }
        if state.withLock({ $0.closed }) {
            throw StoreError(.unavailable, reason: "the database is closed")
        }
        return try await body()
    }

    /// Refuses shared accesses from now on, and runs `closeConnections` once the running
    /// ones have ended: now when none runs (returns true), else when the last one leaves
    /// (returns false). Never blocks.
    @discardableResult
    func close(then closeConnections: @escaping @Sendable () -> Void) -> Bool {
        let now = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.closed = true
            if state.active == 0 { return true }
            state.onDrained = closeConnections
            return false
        }
        if now { closeConnections() }
        return now
    }

    /// Runs `body` with no shared access running or starting.
    func exclusive<T>(_ body: () async throws -> T) async rethrows -> T {
        await acquireExclusive()
        defer { releaseExclusive() }
        return try await body()
    }

    private func enter() async {
        let admitted = state.withLock { state -> Bool in
            guard !state.exclusive else { return false }
            state.active += 1
            return true
        }
        if admitted { return }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.exclusive {
                    state.waiting.append(continuation)
                    return false
                }
                state.active += 1
                return true
            }
            if now { continuation.resume() }
        }
    }

    private func leave() {
        let (drained, closeConnections) = state.withLock { state -> (CheckedContinuation<Void, Never>?, (@Sendable () -> Void)?) in
            state.active -= 1
            guard state.active == 0 else { return (nil, nil) }
            let closeConnections = state.onDrained
            state.onDrained = nil
            let drained = state.drained
            state.drained = nil
            return (drained, closeConnections)
        }
        closeConnections?()
        drained?.resume()
    }

    private func acquireExclusive() async {
        // One exclusive operation at a time.
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.exclusive {
                    state.exclusiveQueue.append(continuation)
                    return false
                }
                state.exclusive = true
                return true
            }
            if now { continuation.resume() }
        }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.active == 0 { return true }
                state.drained = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func releaseExclusive() {
        let (next, waiting) = state.withLock { state -> (CheckedContinuation<Void, Never>?, [CheckedContinuation<Void, Never>]) in
            if !state.exclusiveQueue.isEmpty {
                // The next exclusive operation keeps the gate closed.
                return (state.exclusiveQueue.removeFirst(), [])
            }
            state.exclusive = false
            let waiting = state.waiting
            state.waiting = []
            state.active += waiting.count
            return (nil, waiting)
        }
        next?.resume()
        for continuation in waiting { continuation.resume() }
    }
}
