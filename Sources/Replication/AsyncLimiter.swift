import Synchronization

/// Bounds how many operations run at once (messages in flight): `acquire` waits
/// while the limit is reached.
final class AsyncLimiter: Sendable {
    private struct State {
        var available: Int
        var inUse = 0
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state: Mutex<State>
    /// The most slots one `acquire` can take.
    let limit: Int

    init(limit: Int) {
        self.limit = max(1, limit)
        state = Mutex(State(available: max(1, limit)))
    }

    /// Takes `count` slots (at most `limit`), waiting until they are free. Waiters are
    /// served in order. Does not suspend when the slots are free.
    func acquire(_ count: Int = 1) async {
        let count = min(max(1, count), limit)
        let taken = state.withLock { state -> Bool in
            guard state.waiters.isEmpty, state.available >= count else { return false }
            state.available -= count
            state.inUse += count
            return true
        }
        if taken { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.waiters.isEmpty && state.available >= count {
                    state.available -= count
                    state.inUse += count
                    return true
                }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Gives back `count` slots.
    func release(_ count: Int = 1) {
        var woken: [CheckedContinuation<Void, Never>] = []
        state.withLock { state in
            state.available += count
            state.inUse -= count
            while let first = state.waiters.first, state.available >= first.count {
                state.waiters.removeFirst()
                state.available -= first.count
                state.inUse += first.count
                woken.append(first.continuation)
            }
            if state.inUse == 0 {
                woken += state.idleWaiters
                state.idleWaiters = []
            }
        }
        for continuation in woken { continuation.resume() }
    }

    /// Waits until every slot is free again (or the task is cancelled).
    func waitUntilIdle() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let idle = state.withLock { state -> Bool in
                    if (state.inUse == 0 && state.waiters.isEmpty) || Task.isCancelled { return true }
                    state.idleWaiters.append(continuation)
                    return false
                }
                if idle { continuation.resume() }
            }
        } onCancel: {
            let waiters = state.withLock { state in
                defer { state.idleWaiters = [] }
                return state.idleWaiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Runs `body` holding one slot.
    func run<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }
}
