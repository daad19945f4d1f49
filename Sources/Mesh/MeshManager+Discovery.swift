import Discovery
import Foundation

extension MeshManager {
    /// The first and the longest wait between discovery refreshes while peers are unreachable.
    static let refreshInterval: ClosedRange<Duration> = .seconds(5) ... .seconds(60)

    /// Calls `callback` with the node IDs the dial rule picks (links dialed and accepted,
    /// replacements for unreachable peers included) now, if the mesh is running, and
    /// whenever they change. One callback at a time: a new one replaces the last. It is
    /// called with the mesh's state locked: it must return quickly and not call the mesh.
    public func onChosenPeersChange(_ callback: @escaping @Sendable (Set<String>) -> Void) {
        state.withLock { state in
            state.onChosen = callback
            state.lastChosen = nil
        }
        Task { await reconcile() }
    }

    /// Feeds DNS-SD discoveries into the mesh until `discovery` stops: peers that
    /// serve this database become candidates for the dial rule; a goodbye removes
    /// them. While some dialed peer is unreachable, discovery is refreshed so a healed
    /// partition is found again without waiting for caches: after 5 s, then at doubling
    /// intervals up to a minute while peers stay unreachable (every node of a large
    /// mesh re-browsing every few seconds during a partition was an mDNS storm: with 48
    /// hosts, avahi and dbus took more CPU than the nodes).
    ///
    /// With a discovery that resolves on demand (``DiscoveryConfiguration/resolveOnDemand``),
    /// every browsed peer counts for the dial rule at once, and only the peers the rule picks
    /// are resolved: about `maxPeers` of them, however large the group.
    public func follow(_ discovery: ServiceDiscovery, database: String) -> Task<Void, Never> {
        if discovery.configuration.resolveOnDemand {
            onChosenPeersChange { [weak discovery] chosen in discovery?.resolve(only: chosen) }
        }
        let refresher = Task { [weak self] in
            var interval = Self.refreshInterval.lowerBound
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                if self.peers.contains(where: { $0.dialing && $0.source == .mdns && $0.connectedSince == nil }) {
                    discovery.refresh()
                    interval = min(interval * 2, Self.refreshInterval.upperBound)
                } else {
                    interval = Self.refreshInterval.lowerBound
                }
            }
        }
        return Task { [weak self] in
            defer { refresher.cancel() }
            for await event in discovery.events() {
                guard let self else { return }
                switch event {
                case .browsed(let nodeID):
                    await self.peerListed(nodeID: nodeID)
                case .added(let peer), .updated(let peer):
                    guard peer.databases.isEmpty || peer.databases.contains(database) else {
                        // Of the group but not serving this database (or no longer).
                        await self.peerLost(nodeID: peer.nodeID)
                        continue
                    }
                    await self.peerFound(
                        nodeID: peer.nodeID, url: "ws://\(peer.host):\(peer.port)/\(database)", source: .mdns)
                case .removed(let nodeID):
                    await self.peerLost(nodeID: nodeID)
                case .daemonUnavailable(let reason):
                    self.logger.warning("mDNS unavailable (\(reason)); continuing with static peers")
                case .daemonAvailable:
                    self.logger.info("mDNS available")
                }
            }
        }
    }
}
