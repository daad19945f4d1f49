extension PeerTable {
    /// Compares what should run and be reported with what does and is, updates the
    /// bookkeeping, and returns the effects that close the gap, in this order: resolvers to
    /// stop, resolvers to start, address queries to stop and to start, then events (sorted by
    /// node ID, so the output is deterministic).
    mutating func reconcile() -> [Effect] {
        var effects: [Effect] = []
        reconcileResolvers(into: &effects)
        reconcileAddressQueries(into: &effects)
        let present = onDemand ? Set(instances.keys).subtracting(ownInstanceNames) : []
        for name in present.subtracting(listed).sorted() {
            effects.append(.emit(.browsed(nodeID: name)))
        }
        let removed = reconcileReported(into: &effects)
        for name in listed.subtracting(present).sorted() where reported[name] == nil && !removed.contains(name) {
            effects.append(.emit(.removed(nodeID: name)))
        }
        listed = present
        return effects
    }

    /// Instances that should have a running resolver: browsed on some interface, not this
    /// node, not waiting after a failure.
    private var wantedResolvers: [String: String] {
        var wanted: [String: String] = [:]
        for (name, entry) in instances
        where !entry.interfaces.isEmpty && !ownInstanceNames.contains(name) && !resolveBackoff.contains(name) && isWanted(name) {
            wanted[name] = entry.domain
        }
        return wanted
    }

    private mutating func reconcileResolvers(into effects: inout [Effect]) {
        resolveBackoff = resolveBackoff.filter { instances[$0] != nil }
        let wanted = wantedResolvers
        for name in resolving.subtracting(wanted.keys).sorted() {
            resolving.remove(name)
            effects.append(.stopResolve(instance: name))
        }
        for name in Set(wanted.keys).subtracting(resolving).sorted() {
            resolving.insert(name)
            effects.append(.startResolve(instance: name, domain: wanted[name]!))
        }
    }

    private mutating func reconcileAddressQueries(into effects: inout [Effect]) {
        var wanted: [String: String] = [:]
        var referenced: Set<String> = []
        for (name, entry) in instances where !ownInstanceNames.contains(name) {
            guard let service = entry.service else { continue }
            let key = Self.hostKey(service.hostTarget)
            referenced.insert(key)
            if service.address == nil && !entry.interfaces.isEmpty && !queryBackoff.contains(key) && isWanted(name) {
                wanted[key] = wanted[key] ?? service.hostTarget
            }
        }
        queryBackoff = queryBackoff.filter { referenced.contains($0) }
        addresses = addresses.filter { referenced.contains($0.key) }
        for key in Set(queriedHosts.keys).subtracting(wanted.keys).sorted() {
            let host = queriedHosts.removeValue(forKey: key)!
            effects.append(.stopAddressQuery(host: host))
        }
        for key in Set(wanted.keys).subtracting(queriedHosts.keys).sorted() {
            queriedHosts[key] = wanted[key]!
            effects.append(.startAddressQuery(host: wanted[key]!))
        }
    }

    /// The peer an instance stands for, if it is complete and may be reported.
    private func candidate(_ name: String, _ entry: Instance) -> DiscoveredPeer? {
        guard !ownInstanceNames.contains(name), let service = entry.service else { return nil }
        let advertisement = service.advertisement
        let nodeID = advertisement.nodeID ?? name
        guard nodeID != ownNodeID, advertisement.isMember(ofGroup: group) else { return nil }
        // While a moved peer's new host is being queried, its last reported address stands.
        let pending = reported.values.first { $0.instance == name }?.peer.host
        guard let address = service.address ?? addresses[Self.hostKey(service.hostTarget)]?.first ?? pending else { return nil }
        return DiscoveredPeer(
            nodeID: nodeID,
            host: address,
            port: service.port,
            databases: advertisement.databases,
            protocolVersion: advertisement.protocolVersion,
            source: .mdns
        )
    }

    /// Emits what changed among the reported peers; returns the node IDs reported removed.
    private mutating func reconcileReported(into effects: inout [Effect]) -> Set<String> {
        var byNode: [String: [(instance: String, peer: DiscoveredPeer)]] = [:]
        for (name, entry) in instances {
            guard let peer = candidate(name, entry) else { continue }
            byNode[peer.nodeID, default: []].append((name, peer))
        }
        var wanted: [String: Reported] = [:]
        var removed: Set<String> = []
        for (nodeID, candidates) in byNode {
            let current = reported[nodeID]?.instance
            let chosen = candidates.first { $0.instance == current }
                ?? candidates.min { $0.instance < $1.instance }!
            wanted[nodeID] = Reported(instance: chosen.instance, peer: chosen.peer)
        }
        for nodeID in Set(reported.keys).union(wanted.keys).sorted() {
            switch (reported[nodeID], wanted[nodeID]) {
            case (nil, let new?):
                effects.append(.emit(.added(new.peer)))
            case (let old?, let new?) where old.peer != new.peer:
                effects.append(.emit(.updated(new.peer)))
            case (_?, nil):
                effects.append(.emit(.removed(nodeID: nodeID)))
                removed.insert(nodeID)
            default:
                break
            }
        }
        reported = wanted
        return removed
    }
}
