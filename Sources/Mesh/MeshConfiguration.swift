/// How one database takes part in the mesh.
public struct MeshConfiguration: Sendable, Equatable {
    /// How long a mesh dial waits for the TCP connection: a LAN peer answers a SYN within
    /// milliseconds, so no answer within 2 s (one retransmission) means it is unreachable
    /// now, and the next attempt comes after the (short) backoff instead of the kernel's
    /// growing SYN retransmissions.
    public static let connectTimeout = Duration.seconds(2)

    /// This node's persistent ID.
    public var nodeID: String
    /// The mesh group (default: the database name); nodes of other groups are ignored.
    public var group: String
    /// At most this many connections (the ring rule in `DialRule.neighbors`).
    public var maxPeers: Int
    /// WebSocket heartbeat of mesh links.
    public var heartbeat: Duration
    /// Longest pause between reconnection attempts (before jitter: 50–100% of it). Short,
    /// because a mesh link's peer is on the LAN: a healed partition or a restarted peer
    /// is linked again within about a second, not after a backoff grown during the outage.
    public var maxBackoff: Duration
    /// Peers given by URL (`ws://host:port/db`), dialed beside or instead of mDNS.
    public var staticPeers: [String]

    /// How often, at the least, each side of a link reports its peers and its pending
    /// send to the other (`shoal/meshPeers`, sent at once besides when that changes).
    public var reportInterval: Duration { heartbeat * 2 }
    /// A peer's report older than this (two intervals: one missed, with room for a
    /// loaded peer) no longer counts: what this node has to receive from that peer is then
    /// not known (`LinkState.pendingReceive`), so a link gone silent stops looking in step
    /// soon after its reports stop.
    public var reportMaxAge: Duration { heartbeat * 4 }

    public init(
        nodeID: String, group: String, maxPeers: Int = 8, heartbeat: Duration = .seconds(2),
        maxBackoff: Duration = .seconds(1), staticPeers: [String] = []
    ) {
        self.nodeID = nodeID
        self.group = group
        self.maxPeers = maxPeers
        self.heartbeat = heartbeat
        self.maxBackoff = maxBackoff
        self.staticPeers = staticPeers
    }
}
