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
///
/// With `hedgeAfter`, a connection that has not started by then gets a second
/// attempt beside the first (and a third after as long again): a dial sent into a
/// fault that has since healed (its SYN or upgrade lost, the packets of that
/// connection still waiting on TCP's retransmission timer) does not hold the link
/// down until the deadline. The first attempt to start its session wins; the others
/// are cancelled and, if they connect anyway, refused like an abandoned one. When the
/// dial runs with a `ReconnectSignal.current`, the signal firing (another link of the
/// mesh came up) starts the next attempt at once instead of after `hedgeAfter`.
final class DialAttempt: Sendable {
    private enum Phase { case pending, started, abandoned, finished }

    private struct State {
        var phase = Phase.pending
        var continuation: CheckedContinuation<Void, any Error>?
        /// The attempts, by index (the first is 0).
        var tasks: [Int: Task<Void, Never>] = [:]
        /// Attempts that have not returned yet.
        var running = 0
        /// The attempt whose session started.
        var owner: Int?
        var timer: Task<Void, Never>?
        var hedger: Task<Void, Never>?
    }

    private let state = Mutex(State())

    /// Most attempts at once (the first and its hedges).
    static let maxAttempts = 3

    /// How old an attempt must be before a `ReconnectSignal` starts another beside it: on
    /// a LAN a connection that can succeed answers within milliseconds, so one that has
    /// waited this long most likely went into the fault.
    static let wakeMinimumAge = Duration.milliseconds(300)

    /// How many attempts were started (for tests).
    var attempts: Int { state.withLock { $0.tasks.count } }

    /// Marks the session of attempt `index` as started; false when the dial was
    /// abandoned or another attempt's session started first (this one must not run).
    func start(_ index: Int = 0) -> Bool {
        let (won, losers) = state.withLock { state -> (Bool, [Task<Void, Never>]) in
            guard state.phase == .pending else { return (false, []) }
            state.phase = .started
            state.owner = index
            state.hedger?.cancel()
            return (true, state.tasks.filter { $0.key != index }.map(\.value))
        }
        for loser in losers { loser.cancel() }
        return won
    }

    /// Runs `connect` (which calls `start(index)` when its session begins) until the
    /// started session returns, or fails with `timeoutError` when none has started
    /// within `deadline`, or with CancellationError when the caller is cancelled. With
    /// `hedgeAfter`, another attempt (`connect(1)`, `connect(2)`) starts each time that
    /// long passes with no session started while one still runs; the dial fails before
    /// the deadline when every attempt started so far has failed.
    func run(
        deadline: Duration, hedgeAfter: Duration? = nil, timeoutError: any Error,
        connect: @escaping @Sendable (_ index: Int) async throws -> Void
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
                launch(0, connect: connect)
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
                let wake = ReconnectSignal.current
                let hedger = hedgeAfter.map { delay in
                    Task {
                        var launched = ContinuousClock.now
                        for index in 1..<Self.maxAttempts {
                            // A link of the same mesh that comes up meanwhile (a healed
                            // fault) starts the next attempt at once — unless the last one
                            // is younger than `wakeMinimumAge` (it may still be answered).
                            if let wake {
                                if await wake.sleep(for: delay) {
                                    let age = ContinuousClock.now - launched
                                    if age < Self.wakeMinimumAge { try? await Task.sleep(for: Self.wakeMinimumAge - age) }
                                }
                            } else {
                                try? await Task.sleep(for: delay)
                            }
                            launched = ContinuousClock.now
                            if Task.isCancelled { return }
                            guard state.withLock({ $0.phase == .pending }) else { return }
                            self.launch(index, connect: connect)
                        }
                    }
                }
                state.withLock { state in
                    state.timer = timer
                    state.hedger = hedger
                }
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
                let owner = state.withLock { state in state.owner.flatMap { state.tasks[$0] } }
                owner?.cancel()
            }
        }
    }

    /// Starts attempt `index` (unless the dial is over).
    private func launch(_ index: Int, connect: @escaping @Sendable (Int) async throws -> Void) {
        let task = Task {
            do {
                try await connect(index)
                self.finish(index, .success(()))
            } catch {
                self.finish(index, .failure(error))
            }
        }
        let keep = state.withLock { state -> Bool in
            guard state.phase == .pending else { return false }
            state.tasks[index] = task
            state.running += 1
            return true
        }
        if !keep { task.cancel() }
    }

    /// Attempt `index` returned (or failed) by itself.
    private func finish(_ index: Int, _ result: Result<Void, any Error>) {
        let outcome = state.withLock { state -> (CheckedContinuation<Void, any Error>?, Result<Void, any Error>, [Task<Void, Never>?]) in
            // (while no session runs, the dial ends with the last attempt's outcome)
            state.running -= 1
            switch state.phase {
            case .started where state.owner == index:
                break   // the session ended: so does the dial
            case .pending:
                // No session yet: a failure ends the dial once no attempt is left running
                // (a refused connection fails at once: hedges are for attempts that hang).
                guard state.running == 0 else { return (nil, result, []) }
            default:
                return (nil, result, [])    // a loser, or an abandoned dial
            }
            defer {
                state.continuation = nil
                if state.phase != .abandoned { state.phase = .finished }
            }
            return (state.continuation, result, [state.timer, state.hedger])
        }
        guard let continuation = outcome.0 else { return }
        for task in outcome.2 { task?.cancel() }
        continuation.resume(with: outcome.1)
    }

    /// Gives up: the caller gets `error` now; every attempt is cancelled and left behind.
    private func abandon(with error: any Error) {
        let (continuation, tasks, hedger) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, Array(state.tasks.values), state.hedger)
        }
        hedger?.cancel()
        for task in tasks { task.cancel() }
        continuation?.resume(throwing: error)
    }
}
