import Synchronization

/// One dial with a deadline for the connection to start (TCP connect + WebSocket
/// upgrade), that gives up on time even when the attempt itself cannot be
/// interrupted: a peer that accepts the TCP connection and then answers nothing
/// (a frozen process, a middlebox that drops packets) leaves the WebSocket
/// client waiting for the upgrade response, and cancelling it does not end that
/// wait. The attempt is then abandoned, not awaited: it runs on in its own task
/// until the socket fails or answers, and if it ever starts a session the
/// session is refused at once (the connection closes), so an abandoned dial can
/// never replicate behind the caller's back.
final class DialAttempt: Sendable {
    private enum Phase { case pending, started, abandoned, finished }

    private struct State {
        var phase = Phase.pending
        var continuation: CheckedContinuation<Void, any Error>?
        var task: Task<Void, Never>?
        var timer: Task<Void, Never>?
    }

    private let state = Mutex(State())

    /// Marks the session as started; false when the attempt was abandoned (the
    /// session must not run).
    func start() -> Bool {
        state.withLock { state in
            guard state.phase == .pending else { return false }
            state.phase = .started
            return true
        }
    }

    /// Runs `connect` (which calls `start()` when its session begins) until it
    /// returns, or fails with `timeoutError` when it has not started within
    /// `deadline`, or with CancellationError when the caller is cancelled.
    func run(
        deadline: Duration, timeoutError: any Error, connect: @escaping @Sendable () async throws -> Void
    ) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let alreadyCancelled = state.withLock { state -> Bool in
                    if state.phase == .abandoned { return true }
                    state.continuation = continuation
                    return false
                }
                if alreadyCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                let task = Task {
                    do {
                        try await connect()
                        self.finish(.success(()))
                    } catch {
                        self.finish(.failure(error))
                    }
                }
                let timer = Task {
                    try? await Task.sleep(for: deadline)
                    if Task.isCancelled { return }
                    let abandon = state.withLock { state -> Bool in
                        guard state.phase == .pending else { return false }
                        state.phase = .abandoned
                        return true
                    }
                    if abandon { self.abandon(with: timeoutError) }
                }
                let cancelled = state.withLock { state -> Bool in
                    state.task = task
                    state.timer = timer
                    return state.phase == .abandoned
                }
                if cancelled { task.cancel() }
            }
        } onCancel: {
            let abandon = state.withLock { state -> Bool in
                guard state.phase == .pending else { return false }
                state.phase = .abandoned
                return true
            }
            if abandon {
                self.abandon(with: CancellationError())
            } else {
                state.withLock { $0.task }?.cancel()
            }
        }
    }

    /// The attempt returned (or failed) by itself.
    private func finish(_ result: Result<Void, any Error>) {
        let (continuation, timer) = state.withLock { state in
            defer {
                state.continuation = nil
                if state.phase != .abandoned { state.phase = .finished }
            }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume(with: result)
    }

    /// Gives up: the caller gets `error` now; the attempt is cancelled and left behind.
    private func abandon(with error: any Error) {
        let (continuation, task) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.task)
        }
        task?.cancel()
        continuation?.resume(throwing: error)
    }
}
