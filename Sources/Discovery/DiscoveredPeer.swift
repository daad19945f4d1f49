/// A peer found by DNS-SD or configured statically.
///
/// For an mDNS peer every field comes from its DNS-SD service: `nodeID` from the TXT key `id`
/// (or the instance name when a peer sends no `id`), `host` from the IPv4 address of the
/// service's host target, `port` from the SRV record, `databases` and `protocolVersion` from
/// the TXT keys `db` and `proto`. For a static peer see ``init(staticURL:)``.
public struct DiscoveredPeer: Sendable, Equatable, Hashable {
    /// TXT `id` (the instance name is the node ID too).
    public var nodeID: String
    /// The resolved IPv4 address as a string (e.g. `10.88.0.12`); for static peers the URL host.
    public var host: String
    /// The peer's public port.
    public var port: Int
    /// TXT `db` (comma-separated on the wire).
    public var databases: [String]
    /// TXT `proto`.
    public var protocolVersion: String?
    /// Where the peer came from.
    public var source: Source

    /// How a peer became known.
    public enum Source: String, Sendable {
        /// Found by DNS-SD browsing through the host's avahi-daemon.
        case mdns
        /// Given on the command line or in the configuration.
        case `static`
    }

    /// A peer with all fields given.
    public init(
        nodeID: String,
        host: String,
        port: Int,
        databases: [String],
        protocolVersion: String? = nil,
        source: Source
    ) {
        self.nodeID = nodeID
        self.host = host
        self.port = port
        self.databases = databases
        self.protocolVersion = protocolVersion
        self.source = source
    }
}
