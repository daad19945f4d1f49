import BLIP
import Foundation
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
    /// Documents purged because the peer said access to them was lost (`purge_on_removal`).
    public var docsPurged = 0
    public var docsFailedPull = 0
    /// Revisions offered, held, left out, asked for, received and stored.
    public var revisions = RevisionCounts()
    /// Attachment bytes fetched from the peer.
    public var attachmentBytesPulled = 0
    /// BLIP bytes (frames, as sent over the WebSocket) to and from the peer, over
    /// every connection of this replication.
    public var bytesSent = 0
    public var bytesReceived = 0
    /// The latest failure (a connection's, or a refused document's); cleared when a
    /// connection starts replicating again.
    public var lastError: String?
    /// When `state` last changed between connected (`running`/`idle`) and not.
    public var stateSince: Date?
    /// When the replication (or session) started: a replication started again gets
    /// fresh counters and a new start.
    public var startedAt = Date()
    /// The local sequence this replication has pushed through (its checkpoint), when it pushes.
    public var pushedThrough: UInt64?
    /// The WebSocket subprotocol of the latest connection, when known (a dialed one):
    /// `BLIP_3+CBMobile_4` when documents travel by versions.
    public var subprotocol: String?

    /// Whether a connection is up (`running` or `idle`).
    public var isConnected: Bool { state == .running || state == .idle }

    public init() {}
}

/// Live, thread-safe counters of one replication (or one passive session).
public final class ReplicationProgress: Sendable {
    private let state = Mutex(ReplicationStatus())
    /// Connections in use, whose byte counts are added to the status live.
    private let connections = Mutex<[ObjectIdentifier: BLIPConnection]>([:])
    /// The link's convergence accounting (`ReplicationProgress+Link.swift`).
    let ledger = Mutex(LinkLedger())
    /// Moves on whenever what this side has to send changes (`ReplicationProgress+Link.swift`).
    public let sendSignal = ChangeSignal()

    public init() {}

    public var status: ReplicationStatus {
        var status = state.withLock { $0 }
        for connection in connections.withLock({ Array($0.values) }) {
            let statistics = connection.statistics
            status.bytesSent += statistics.bytesSent
            status.bytesReceived += statistics.bytesReceived
        }
        return status
    }

    /// Counts `connection`'s bytes from now on (until `untrack`).
    func track(_ connection: BLIPConnection) {
        let added = connections.withLock { $0.updateValue(connection, forKey: ObjectIdentifier(connection)) == nil }
        if added { connectionStarted(connection) }
    }

    /// Whether `connection` is one this progress counts (a session of it is open).
    public func carries(_ connection: BLIPConnection) -> Bool {
        connections.withLock { $0[ObjectIdentifier(connection)] != nil }
    }

    /// True when a connection of this progress is open.
    var hasOpenConnection: Bool {
        connections.withLock { $0.values.contains { !$0.isClosed } }
    }

    /// Keeps the final byte counts of a connection that ended.
    func untrack(_ connection: BLIPConnection) {
        guard connections.withLock({ $0.removeValue(forKey: ObjectIdentifier(connection)) }) != nil else { return }
        connectionEnded(connection)
        let statistics = connection.statistics
        state.withLock { status in
            status.bytesSent += statistics.bytesSent
            status.bytesReceived += statistics.bytesReceived
        }
    }

    func update(_ change: (inout ReplicationStatus) -> Void) {
        state.withLock { change(&$0) }
    }

    func setState(_ value: ReplicationStatus.State) {
        state.withLock { status in
            let wasConnected = status.isConnected
            status.state = value
            // Replicating again: the previous connection's error is over.
            if value == .running { status.lastError = nil }
            if status.stateSince == nil || wasConnected != status.isConnected { status.stateSince = Date() }
        }
    }
}
