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
    /// When set, the browse is closed ("rests") this long after it was opened, and
    /// ``ServiceDiscovery/refresh()`` opens it again; `nil` browses without a pause.
    ///
    /// A browse is a querier in avahi-daemon that asks again after 1, 2, 4, 8… s with every
    /// peer it knows as a known answer, and every daemon on the link files each known answer
    /// of each question in a list it searches linearly: with dozens of nodes started at once
    /// that is most of the CPU of every daemon. A resting node still answers others' questions
    /// and keeps its resolvers; a node that arrives later finds it by its own browse (and
    /// links to it), so nodes that start together stop asking together. While it
    /// rests it does not see goodbyes: a peer that left is forgotten when the reopened browse
    /// does not list it again. Resolvers and address queries rest too: each is closed once it
    /// answered (its querier would ask again after 1, 2, 4… s with the answer as a known answer)
    /// and opened again by the next refresh, so TXT, port and address changes are seen then.
    public var browseRestsAfter: Duration?

    /// A configuration with the default service type, protocol version and timings.
    public init(nodeID: String, group: String, port: Int, databases: [String]) {
        self.nodeID = nodeID
        self.group = group
        self.port = port
        self.databases = databases
    }
}
