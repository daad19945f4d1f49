import Synchronization

/// Fans the latest committed sequence out to any number of listeners: async
/// streams (replicators) and one-shot waiters with a timeout (longpoll and
/// continuous feeds). Slow stream listeners only ever see the newest value.
final class ChangeNotifier: Sendable {
    private struct State {
        var latest: UInt64
        var next = 0
        var listeners: [Int: AsyncStream<UInt64>.Continuation] = [:]
        var waiters: [Int: (after: UInt64, continuation: CheckedContinuation<Bool, Never>)] = [:]
        var finished = false
    }
    private let state: Mutex<State>

    init(latest: UInt64) {
        state = Mutex(State(latest: latest))
    }

    /// The latest published (committed) sequence.
    var latest: UInt64 { state.withLock { $0.latest } }

    func subscribe() -> AsyncStream<UInt64> {
        let (stream, continuation) = AsyncStream.makeStream(of: UInt64.self, bufferingPolicy: .bufferingNewest(1))
        let id: Int? = state.withLock { state in
            continuation.yield(state.latest)
            guard !state.finished else { return nil }
            let id = state.next
            state.next += 1
            state.listeners[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.listeners.removeValue(forKey: id) }
        }
        return stream
    }

    /// Waits until a sequence above `after` is committed (true) or `timeout` passes,
    /// the task is cancelled or the store closes (false).
    func wait(after: UInt64, timeout: Duration) async -> Bool {
        let id = state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate: Bool? = state.withLock { state in
                    if state.latest > after { return true }
                    if state.finished || Task.isCancelled { return false }
                    state.waiters[id] = (after, continuation)
                    return nil
                }
                if let immediate {
                    continuation.resume(returning: immediate)
                    return
                }
                Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    self?.resumeWaiter(id, with: false)
                }
            }
        } onCancel: {
            resumeWaiter(id, with: false)
        }
    }

    private func resumeWaiter(_ id: Int, with value: Bool) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: value)
    }

    func publish(_ sequence: UInt64) {
        let (listeners, woken) = state.withLock { state in
            state.latest = max(state.latest, sequence)
            let ready = state.waiters.filter { $0.value.after < sequence }
            for id in ready.keys { state.waiters.removeValue(forKey: id) }
            return (Array(state.listeners.values), ready.values.map(\.continuation))
        }
        for listener in listeners { listener.yield(sequence) }
        for waiter in woken { waiter.resume(returning: true) }
    }

    func finish() {
        let (listeners, waiters) = state.withLock { state in
            state.finished = true
            defer {
                state.listeners.removeAll()
                state.waiters.removeAll()
            }
            return (Array(state.listeners.values), state.waiters.values.map(\.continuation))
        }
        for listener in listeners { listener.finish() }
        for waiter in waiters { waiter.resume(returning: false) }
    }
}
