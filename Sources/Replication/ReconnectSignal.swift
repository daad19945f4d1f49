/// "A link just came up": shared by the links of one mesh. When a peer that was out of
/// reach connects (a dial of ours reached it, or it reached us), a partition or an outage
/// has likely just healed, so the other links that are waiting to reconnect should try
/// now rather than when their backoff or their hung attempt's timer says: a dial in its
/// backoff dials at once, and a dial whose attempt is still waiting for an answer (its
/// SYN or upgrade lost in the fault, TCP's retransmission timer running) starts its next
/// hedged attempt at once (`DialAttempt`). A signal nobody waits on costs nothing.
///
/// The replicator's dial runs with the signal as `ReconnectSignal.current` (a task-local
/// value), which `DialAttempt` reads; the replicator's backoff waits on it directly. The
/// waiting itself is a `ChangeSignal`'s.
public final class ReconnectSignal: Sendable {
    private let signal = ChangeSignal()

    /// The signal of the dial running in this task (nil: none).
    @TaskLocal public static var current: ReconnectSignal?

    public init() {}

    /// Wakes everything waiting now.
    public func fire() {
        signal.notify()
    }

    /// Sleeps `duration`, or less when the signal fires meanwhile; returns true when it
    /// fired. Returns at once when the task is cancelled.
    @discardableResult
    public func sleep(for duration: Duration) async -> Bool {
        let generation = signal.generation
        await signal.wait(after: generation, timeout: duration)
        return signal.generation != generation
    }
}
