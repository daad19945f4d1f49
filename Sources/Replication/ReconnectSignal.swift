import Foundation
import Synchronization

/// "A link just came up": shared by the links of one mesh. When a peer that was out of
/// reach connects (a dial of ours reached it, or it reached us), a partition or an outage
/// has likely just healed, so the other links that are waiting to reconnect should try
/// now rather than when their backoff or their hung attempt's timer says: a dial in its
/// backoff dials at once, and a dial whose attempt is still waiting for an answer (its
/// SYN or upgrade lost in the fault, TCP's retransmission timer running) starts its next
/// hedged attempt at once (`DialAttempt`). A signal nobody waits on costs nothing.
///
/// The replicator's dial runs with the signal as `ReconnectSignal.current` (a task-local
/// value), which `DialAttempt` reads; the replicator's backoff waits on it directly.
public final class ReconnectSignal: Sendable {
    private struct State {
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
        var fired = 0
    }

    private let state = Mutex(State())

    /// The signal of the dial running in this task (nil: none).
    @TaskLocal public static var current: ReconnectSignal?

    public init() {}

    /// How many times it fired (for tests and logs).
    public var fireCount: Int { state.withLock { $0.fired } }

    /// Wakes everything waiting now.
    public func fire() {
        let waiters = state.withLock { state in
            defer { state.waiters = [:] }
            state.fired += 1
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Sleeps `duration`, or less when the signal fires meanwhile; returns true when it
    /// fired. Returns at once when the task is cancelled.
    @discardableResult
    public func sleep(for duration: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await Task.sleep(for: duration)
                return false
            }
            group.addTask { await self.nextFire() }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Returns at the next `fire()` (true), or when the task is cancelled (false).
    private func nextFire() async -> Bool {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let cancelled = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if cancelled { continuation.resume() }
            }
            return !Task.isCancelled
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
