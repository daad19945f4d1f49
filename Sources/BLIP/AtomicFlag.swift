import Synchronization

/// A thread-safe boolean, for state that tasks of one connection (or one replication)
/// share: whether the session returned, whether a dial got connected.
public final class AtomicFlag: Sendable {
    private let state = Mutex(false)

    public init() {}

    public var value: Bool {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}
