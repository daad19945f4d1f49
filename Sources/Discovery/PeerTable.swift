/// The pure state machine behind ``ServiceDiscovery``: what was browsed, resolved and
/// addressed, which peers were reported, and what to do next. No I/O, no clock.
///
/// Every input (a browse result, a resolve result, an address, a lost connection to the daemon,
/// a refresh) updates the table and returns the ``Effect``s to carry out: resolvers and address
/// queries to start or stop, and events to emit. The effects are computed by comparing what
/// should be running/reported with what is (see `reconcile()`), so any sequence of inputs leaves
/// the handles and the reported peers consistent.
///
/// Rules:
/// - An instance is browsed per interface; it exists while at least one interface has it
///   (several interfaces report the same service once each).
/// - Each browsed instance has one resolver (SRV + TXT, and the host's IPv4 address), running
///   so TXT/port/address changes are seen (until the lookups rest). A host target whose
///   resolvers answered without an address gets one address query (type A), shared by its
///   instances.
/// - A peer is reported once it has an SRV/TXT result and an IPv4 address: the resolver's, else
///   the first address the query saw for the host (used while it lasts; the last one is kept
///   when all are withdrawn).
/// - This node (instance name or TXT `id`) and services whose TXT `group` differs are never
///   reported. Two instances with the same TXT `id` are reported once (the one reported
///   first, else the smallest instance name).
/// - After the handles were lost or a refresh (``handlesLost()``), known instances become
///   stale: they stay reported, are resolved again when browsed again, and ``sweepStale()``
///   removes those that were not.
/// - A browse that rested and is opened again (``browseReopened()``) must list every known
///   instance again: ``browseConfirmed()`` (after the daemon's cache was read out) forgets
///   the instances it did not list; they left while nobody was browsing.
/// - On demand (`onDemand`): every browsed instance is reported ``DiscoveryEvent/browsed(nodeID:)``
///   by its instance name (and `removed` when it goes before it was reported), but only the
///   instances named in `wanted` (``want(_:)``) are resolved and addressed. A peer resolved
///   while wanted stays reported after it is no longer wanted, with what was last resolved.
struct PeerTable: Sendable {
    /// Something for the I/O side to do.
    enum Effect: Sendable, Equatable {
        case emit(DiscoveryEvent)
        case startResolve(instance: String, domain: String)
        case stopResolve(instance: String)
        /// `host` is the host target as resolved (e.g. `node2.local.`).
        case startAddressQuery(host: String)
        case stopAddressQuery(host: String)
    }

    /// What the service resolver said about an instance.
    struct ResolvedService: Sendable, Equatable {
        var hostTarget: String
        var port: Int
        var advertisement: ServiceAdvertisement
        /// The host's IPv4 address as the resolver found it (nil: ask an address query).
        var address: String?
    }

    struct Instance: Sendable, Equatable {
        var interfaces: Set<UInt32> = []
        var domain: String
        var service: ResolvedService?
        var stale = false
    }

    struct Reported: Sendable, Equatable {
        var instance: String
        var peer: DiscoveredPeer
    }

    let ownNodeID: String
    let group: String
    var ownInstanceNames: Set<String>
    var instances: [String: Instance] = [:]
    /// Host key (lowercased, no trailing dot) → IPv4 addresses in the order seen.
    var addresses: [String: [String]] = [:]
    /// Instances with a running resolver.
    var resolving: Set<String> = []
    /// Instances whose resolver failed; not resolved again before ``retryResolve(_:)``.
    var resolveBackoff: Set<String> = []
    /// Host key → host target, for the running address queries.
    var queriedHosts: [String: String] = [:]
    /// Host keys whose query failed; not queried again before ``retryAddressQuery(_:)``.
    var queryBackoff: Set<String> = []
    /// Node ID → what was last reported for it.
    var reported: [String: Reported] = [:]
    /// Whether only the instances in `wanted` are resolved (and browsed ones are listed).
    let onDemand: Bool
    /// The instance names to resolve when `onDemand`.
    var wanted: Set<String> = []
    /// The instance names reported `browsed` (when `onDemand`) and not reported gone since.
    var listed: Set<String> = []
    /// Known instances a reopened browse has not listed yet (see ``browseReopened()``).
    var unconfirmed: Set<String> = []

    init(ownNodeID: String, group: String, onDemand: Bool = false) {
        self.ownNodeID = ownNodeID
        self.group = group
        self.onDemand = onDemand
        self.ownInstanceNames = [ServiceNaming.instanceName(forNodeID: ownNodeID)]
    }

    /// Resolves (when `onDemand`) exactly the instances named in `names` from now on.
    mutating func want(_ names: Set<String>) -> [Effect] {
        wanted = names
        return reconcile()
    }

    /// Whether the instance `name` should be resolved and its host addressed.
    func isWanted(_ name: String) -> Bool { !onDemand || wanted.contains(name) }

    /// The peers currently reported, by node ID.
    var peers: [String: DiscoveredPeer] { reported.mapValues(\.peer) }

    /// The registration is known under `name` (Avahi may rename it on a conflict).
    mutating func registered(as name: String) -> [Effect] {
        ownInstanceNames.insert(name)
        instances[name] = nil
        return reconcile()
    }

    mutating func browseAdded(instance name: String, interface: UInt32, domain: String) -> [Effect] {
        guard !ownInstanceNames.contains(name) else { return [] }
        var entry = instances[name] ?? Instance(domain: domain)
        entry.interfaces.insert(interface)
        entry.domain = domain
        if entry.stale {
            entry.stale = false
            resolveBackoff.remove(name)
        }
        instances[name] = entry
        unconfirmed.remove(name)
        return reconcile()
    }

    mutating func browseRemoved(instance name: String, interface: UInt32) -> [Effect] {
        unconfirmed.remove(name)
        guard var entry = instances[name] else { return [] }
        entry.interfaces.remove(interface)
        instances[name] = entry.interfaces.isEmpty ? nil : entry
        return reconcile()
    }

    mutating func resolved(
        instance name: String, hostTarget: String, port: Int, txt: TXTRecord, address: String? = nil
    ) -> [Effect] {
        guard var entry = instances[name], !entry.interfaces.isEmpty else { return [] }
        entry.service = ResolvedService(
            hostTarget: hostTarget,
            port: port,
            advertisement: ServiceAdvertisement(txt: txt),
            address: address
        )
        instances[name] = entry
        return reconcile()
    }

    /// The resolver of `name` failed and is gone; it waits for ``retryResolve(_:)``.
    mutating func resolveFailed(instance name: String) -> [Effect] {
        resolving.remove(name)
        if instances[name] != nil { resolveBackoff.insert(name) }
        return reconcile()
    }

    mutating func retryResolve(_ name: String) -> [Effect] {
        resolveBackoff.remove(name)
        return reconcile()
    }

    mutating func addressAdded(host: String, address: String) -> [Effect] {
        let key = Self.hostKey(host)
        guard queriedHosts[key] != nil else { return [] }
        var list = addresses[key] ?? []
        if !list.contains(address) { list.append(address) }
        addresses[key] = list
        return reconcile()
    }

    /// An address was withdrawn; the last one of a host is kept (the browse says when a peer
    /// is gone, not its address record).
    mutating func addressRemoved(host: String, address: String) -> [Effect] {
        let key = Self.hostKey(host)
        guard var list = addresses[key], list.count > 1 else { return [] }
        list.removeAll { $0 == address }
        addresses[key] = list
        return reconcile()
    }

    /// The address query of `host` failed and is gone; it waits for ``retryAddressQuery(_:)``.
    mutating func addressQueryFailed(host: String) -> [Effect] {
        let key = Self.hostKey(host)
        queriedHosts[key] = nil
        queryBackoff.insert(key)
        return reconcile()
    }

    mutating func retryAddressQuery(_ host: String) -> [Effect] {
        queryBackoff.remove(Self.hostKey(host))
        return reconcile()
    }

    /// The browse, every resolver and every address query are gone (the daemon went away, or
    /// a refresh tore them down). Known instances become stale; reported peers stay.
    mutating func handlesLost() -> [Effect] {
        unconfirmed = []
        resolving = []
        resolveBackoff = []
        queriedHosts = [:]
        queryBackoff = []
        for name in instances.keys {
            instances[name]?.interfaces = []
            instances[name]?.stale = true
        }
        return reconcile()
    }

    /// The browse rested (closed while nothing changed; resolvers and address queries kept
    /// running, every instance kept) and is opened again: each known instance has to be listed
    /// by it again before ``browseConfirmed()``.
    mutating func browseReopened() {
        unconfirmed = Set(instances.keys).subtracting(ownInstanceNames)
    }

    /// The reopened browse has listed everything the daemon holds: the instances it did not
    /// list left while it rested (a goodbye or an expiry nobody was browsing for); they are
    /// forgotten and their peers reported removed.
    mutating func browseConfirmed() -> [Effect] {
        guard !unconfirmed.isEmpty else { return [] }
        for name in unconfirmed { instances[name] = nil }
        unconfirmed = []
        return reconcile()
    }

    /// Forgets the stale instances that were not browsed again, reporting their peers removed.
    mutating func sweepStale() -> [Effect] {
        instances = instances.filter { !($0.value.stale && $0.value.interfaces.isEmpty) }
        return reconcile()
    }

    /// Whether there are stale instances left to sweep.
    var hasStaleInstances: Bool { instances.values.contains { $0.stale } }

    static func hostKey(_ host: String) -> String {
        var key = host.lowercased()
        while key.hasSuffix(".") { key.removeLast() }
        return key
    }
}
