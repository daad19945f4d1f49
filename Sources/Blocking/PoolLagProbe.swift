import Synchronization

/// Measures how late a ready task runs on Swift's cooperative pool: every `interval` a
/// tiny task sleeps until a deadline, and the time from that deadline until it runs again
/// is the lag. On an idle pool it is a fraction of a millisecond; a blocking call on a
/// pool thread (or a CPU-bound loop that never suspends) shows as a lag as long as it.
///
/// `PoolLagProbe` owns its probing task and the figures it measured: the last lag, the
/// worst since it started, and the worst of the last `window`. `onLag` gets the figures
/// after every measurement (`last` is the new one), for a metric or a warning; it must
/// not block.
public final class PoolLagProbe: Sendable {
    /// What the probe measured so far.
    public struct Figures: Sendable, Equatable {
        /// The latest measurement.
        public var last: Duration = .zero
        /// The worst since the probe started.
        public var worst: Duration = .zero
        /// The worst of the current and previous `window`.
        public var recentWorst: Duration = .zero
        /// How many measurements were taken.
        public var samples = 0
    }

    private struct State {
        var figures = Figures()
        var windowStart: ContinuousClock.Instant
        var windowWorst: Duration = .zero
        var previousWindowWorst: Duration = .zero
        var task: Task<Void, Never>?
    }

    /// How often the probe task runs.
    public let interval: Duration
    /// How far back `recentWorst` looks (between one and two windows).
    public let window: Duration
    /// The executor whose lag is measured: `nil` is the global concurrent executor, the
    /// cooperative pool (tests give their own, so as not to stall everyone else's).
    public let executor: (any TaskExecutor)?
    private let onLag: @Sendable (Figures) -> Void
    private let state: Mutex<State>

    public init(
        interval: Duration = .milliseconds(100), window: Duration = .seconds(10),
        executor: (any TaskExecutor)? = nil,
        onLag: @escaping @Sendable (Figures) -> Void = { _ in }
    ) {
        self.interval = interval
        self.window = window
        self.executor = executor
        self.onLag = onLag
        state = Mutex(State(windowStart: .now))
    }

    deinit {
        state.withLock { $0.task?.cancel() }
    }

    /// Starts probing (once; later calls do nothing). The probe task runs on the executor
    /// it measures (the global concurrent executor unless one was given), until `stop`.
    public func start() {
        state.withLock { state in
            guard state.task == nil else { return }
            state.windowStart = .now
            state.task = Task.detached(executorPreference: executor) { [weak self, interval] in
                let clock = ContinuousClock()
                while !Task.isCancelled {
                    let due = clock.now + interval
                    do { try await Task.sleep(until: due, clock: clock) } catch { return }
                    guard let self else { return }
                    self.record(clock.now - due)
                }
            }
        }
    }

    /// Stops probing; the figures stay.
    public func stop() {
        state.withLock { state in
            state.task?.cancel()
            state.task = nil
        }
    }

    /// The figures so far.
    public var figures: Figures {
        state.withLock { state in
            rolled(&state)
            return state.figures
        }
    }

    /// Records one measurement (called by the probe task; tests may feed it too).
    func record(_ lag: Duration) {
        let figures = state.withLock { state in
            rolled(&state)
            state.figures.last = lag
            state.figures.samples += 1
            state.figures.worst = max(state.figures.worst, lag)
            state.windowWorst = max(state.windowWorst, lag)
            state.figures.recentWorst = max(state.windowWorst, state.previousWindowWorst)
            return state.figures
        }
        onLag(figures)
    }

    /// Starts a new window when the current one is over.
    private func rolled(_ state: inout State) {
        let now = ContinuousClock.now
        guard now - state.windowStart >= window else { return }
        // A probe that was stopped for more than a window has nothing recent.
        state.previousWindowWorst = now - state.windowStart >= window * 2 ? .zero : state.windowWorst
        state.windowWorst = .zero
        state.windowStart = now
        state.figures.recentWorst = state.previousWindowWorst
    }
}
