/// How one database takes part in the mesh.
public struct MeshConfiguration: Sendable, Equatable {
    /// This node's persistent ID.
    public var nodeID: String
    /// The mesh group (default: the database name); nodes of other groups are ignored.
    public var group: String
    /// At most this many connections (the ring rule in `DialRule.neighbors`).
    public var maxPeers: Int
    /// WebSocket heartbeat of mesh links.
    public var heartbeat: Duration
    /// Longest pause between reconnection attempts (before jitter).
    public var maxBackoff: Duration
    /// Peers given by URL (`ws://host:port/db`), dialed beside or instead of mDNS.
    public var staticPeers: [String]

    public init(
        nodeID: String, group: String, maxPeers: Int = 8, heartbeat: Duration = .seconds(2),
        maxBackoff: Duration = .seconds(3), staticPeers: [String] = []
    ) {
        self.nodeID = nodeID
        self.group = group
        self.maxPeers = maxPeers
        self.heartbeat = heartbeat
        self.maxBackoff = maxBackoff
        self.staticPeers = staticPeers
    }
}
