/// A change in what ``ServiceDiscovery`` knows, in the order it happened.
///
/// The first availability event of a run is `daemonAvailable` or `daemonUnavailable`; after
/// that they alternate, each reported once per transition. Peers stay known while the daemon is
/// away (mDNS cannot say whether they are gone; liveness is the connection's job); peers that
/// are no longer advertised when the daemon is back are reported `removed` a few seconds later.
public enum DiscoveryEvent: Sendable, Equatable {
    /// A peer of this group advertises itself; `nodeID` is its instance name (a node registers
    /// under its node ID). Reported only when resolving on demand
    /// (``DiscoveryConfiguration/resolveOnDemand``), before the peer is resolved, if it ever is:
    /// see ``ServiceDiscovery/resolve(only:)``. A `removed` follows when the peer goes.
    case browsed(nodeID: String)
    /// A peer was seen for the first time (fully resolved: address, port, TXT).
    case added(DiscoveredPeer)
    /// A known peer changed its address, port, databases or protocol version.
    case updated(DiscoveredPeer)
    /// A peer withdrew its service (goodbye) or was not found again after a refresh (for a
    /// peer only browsed, `nodeID` is its instance name).
    case removed(nodeID: String)
    /// No avahi-daemon (or no system D-Bus) is reachable; the message says why. Reported once;
    /// the handles are then re-created quietly every `retryInterval`.
    case daemonUnavailable(String)
    /// The daemon is reachable: this node is registered and browsing.
    case daemonAvailable
}
