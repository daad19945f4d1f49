import DocumentStore

/// What the peer of a replication session may read and as whom it writes, decided by
/// whoever accepted the connection (the node: a mesh peer, an administrator, or an
/// authenticated user). The Replication module knows nothing of users: it gets the
/// writer identity to hand to the store, and a function giving the channels the peer
/// may pull (with the sequence each counts from), asked again for every batch so that
/// grants and revocations take effect during a continuous pull. A read that fails
/// throws: the pull it serves ends with an error (the peer retries) rather than
/// being read as "no channels", which would look like an empty, finished feed.
public struct PeerAccess: Sendable {
    /// Passed to `DocumentStore.save(batch:author:)` for revisions the peer sends.
    public var author: (any Sendable)?
    /// Channels the peer may pull; nil means every document (mesh peers, administrators).
    public var channels: (@Sendable () async throws -> [String: UInt64]?)?

    /// The channels the peer lost after a sequence of its feed (and cannot read now):
    /// a pull resuming from there is told which documents it can no longer see.
    public var lostChannels: (@Sendable (UInt64) async throws -> Set<String>)?

    /// How the peer speaks: its connection's protocol version, and whether it is a Shoal
    /// node, another server or a client in Sync Gateway's no-conflicts mode (a pushed
    /// revision that would start a branch is refused with 409; it is offered winners only).
    public var dialect: PeerDialect

    /// What the revisions the peer sends are recorded as (`RevisionOrigin.peer`, with the
    /// peer's node ID when it is a mesh node).
    public var origin: RevisionOrigin

    public init(
        author: (any Sendable)? = nil, channels: (@Sendable () async throws -> [String: UInt64]?)? = nil,
        lostChannels: (@Sendable (UInt64) async throws -> Set<String>)? = nil, dialect: PeerDialect = PeerDialect(),
        origin: RevisionOrigin = .peer(node: nil)
    ) {
        self.origin = origin
        self.author = author
        self.channels = channels
        self.lostChannels = lostChannels
        self.dialect = dialect
    }

    /// Everything, as an administrator (mesh peers, the admin port, active replications).
    public static let full = PeerAccess()

    /// True when the peer may read every document (no channel limit, or the `*` channel).
    public func readsEverything() async throws -> Bool {
        guard let channels else { return true }
        return try await channels()?["*"] != nil
    }
}
