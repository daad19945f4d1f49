/// What ``ServiceDiscovery`` registers and browses for.
///
/// The node registers `serviceType` (default `_shoal._tcp`) with the instance name `nodeID`,
/// the subtype of `group` (see ``ServiceNaming``) and the TXT keys of
/// ``ServiceAdvertisement``, and browses the subtype of `group` only.
public struct DiscoveryConfiguration: Sendable {
    /// This node's ID: the instance name and TXT `id`. Never reported as a peer.
    public var nodeID: String
    /// The mesh group: DNS-SD subtype `_<group>._sub._shoal._tcp` (sanitized to DNS label
    /// rules, see ``ServiceNaming/subtypeLabel(forGroup:)``) and TXT `group`.
    public var group: String
    /// The public port to advertise.
    public var port: Int
    /// The databases to advertise (TXT `db`).
    public var databases: [String]
    /// TXT `proto`.
    public var protocolVersion: String = "1"
    /// The DNS-SD service type.
    public var serviceType: String = "_shoal._tcp"
    /// How often dead handles are re-created while the daemon is away, and how long a failed
    /// resolve waits before it is tried again.
    public var retryInterval: Duration = .seconds(2)
    /// After a reconnect to the daemon, how long a previously known peer may take to be browsed
    /// again before it is reported removed; also how long a refresh's question stays open.
    public var resyncGracePeriod: Duration = .seconds(5)
    /// Resolve only the peers asked for (``ServiceDiscovery/resolve(only:)``) instead of every
    /// peer browsed; every browsed peer is then reported ``DiscoveryEvent/browsed(nodeID:)``.
    /// A mesh that links to a few of many peers needs only those few addresses, and each
    /// resolution is continuous work for every avahi-daemon on the link.
    public var resolveOnDemand = false

    /// A configuration with the default service type, protocol version and timings.
    public init(nodeID: String, group: String, port: Int, databases: [String]) {
        self.nodeID = nodeID
        self.group = group
        self.port = port
        self.databases = databases
    }
}
