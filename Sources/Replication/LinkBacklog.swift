/// Changes one side of a replication link has not moved to the other yet: how many
/// sequences of the sending database's feed are not acknowledged, and how many
/// documents they hold (each document once, at its latest change).
public struct LinkBacklog: Sendable, Equatable {
    public var sequences: Int
    public var documents: Int

    public static let zero = LinkBacklog(sequences: 0, documents: 0)

    public init(sequences: Int, documents: Int) {
        self.sequences = sequences
        self.documents = documents
    }

    public var isZero: Bool { sequences == 0 && documents == 0 }

    public static func + (lhs: LinkBacklog, rhs: LinkBacklog) -> LinkBacklog {
        LinkBacklog(sequences: lhs.sequences + rhs.sequences, documents: lhs.documents + rhs.documents)
    }
}

/// One replication link's convergence accounting, as data (`ReplicationProgress.linkState`):
/// whether it is up, what is pending each way, whether anything is queued or in flight,
/// and whether the two sides are in step. The mesh sums it per peer; the REST API, the
/// metrics, the CLI and the admin UI only show it.
public struct LinkState: Sendable, Equatable {
    /// A connection of the link is up.
    public var connected = false
    /// Local changes the peer has not acknowledged (stored) yet, over every collection.
    /// Documents are counted up to `ReplicationProgress.documentCountLimit` per collection
    /// (`linkStateEstimate(reportMaxAge:)` gives the sequences as their bound instead).
    public var pendingSend = LinkBacklog.zero
    /// False while a collection of the link has no feed to the peer yet (the peer has not
    /// subscribed): what it lacks is not known, so the link is neither idle nor in step.
    public var sendKnown = true
    /// The peer's changes this side has not stored yet: what the peer reported as its own
    /// pending send over this link (`recordPeerReport`), raised to what this side still
    /// awaits; nil when the peer reported nothing recent (a Couchbase peer never does).
    public var pendingReceive: LinkBacklog?
    /// Revisions the peer refused over the current connection (never acknowledged as
    /// stored; the checkpoint moved past them): documents may differ, so not in step.
    public var refused = 0
    /// The peer's latest sequence (of its default collection), as it last reported it.
    public var peerLastSequence: UInt64?
    /// Connected, and nothing queued or in flight either way: no local change waits to be
    /// offered or acknowledged, no revision is awaited from the peer, and the peer's last
    /// report says it has nothing queued for us.
    public var idle = false

    public init() {}

    /// Connected, idle, nothing pending either way (the peer's side known) and nothing refused.
    public var inStep: Bool {
        idle && sendKnown && pendingSend.isZero && pendingReceive?.isZero == true && refused == 0
    }
}
