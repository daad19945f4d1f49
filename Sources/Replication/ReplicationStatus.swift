import Synchronization

/// A snapshot of a replication's state and counters (Sync Gateway's
/// `_replicationStatus` fields).
public struct ReplicationStatus: Sendable, Equatable {
    public enum State: String, Sendable, Equatable {
        case starting, running, idle, reconnecting, stopped, error
    }

    public var state: State = .starting
    public var docsCheckedPush = 0
    public var docsPushed = 0
    public var docsFailedPush = 0
    public var docsCheckedPull = 0
    public var docsPulled = 0
    public var docsFailedPull = 0
    /// Attachment bytes fetched from the peer.
    public var attachmentBytesPulled = 0
    public var lastError: String?

    public init() {}
}

/// Live, thread-safe counters of one replication (or one passive session).
public final class ReplicationProgress: Sendable {
    private let state = Mutex(ReplicationStatus())

    public init() {}

    public var status: ReplicationStatus { state.withLock { $0 } }

    func update(_ change: (inout ReplicationStatus) -> Void) {
        state.withLock { change(&$0) }
    }

    func setState(_ value: ReplicationStatus.State) {
        state.withLock { $0.state = value }
    }
}
