import Discovery
import Foundation
import Synchronization

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

    /// Feeds DNS-SD discoveries into the meshes of the databases of one mesh group (they
    /// share the group's discovery, whose events can be taken once) until `discovery`
    /// stops: peers that serve a database become candidates for its dial rule; a goodbye
    /// removes them. While some dialed peer is unreachable, discovery is refreshed so a
    /// healed partition is found again without waiting for caches: after 5 s, then at
    /// doubling intervals up to a minute while peers stay unreachable (every node of a
    /// large mesh re-browsing every few seconds during a partition was an mDNS storm: with
    /// 48 hosts, avahi and dbus took more CPU than the nodes).
    ///
    /// With a discovery that resolves on demand (``DiscoveryConfiguration/resolveOnDemand``),
    /// every browsed peer counts for the dial rules at once, and only the peers some mesh's
    /// rule picks are resolved: about `maxPeers` per database, however large the group.
    public static func follow(_ discovery: ServiceDiscovery, meshes: [(mesh: MeshManager, database: String)]) -> Task<Void, Never> {
        if discovery.configuration.resolveOnDemand {
            let reporters = unionReporters(count: meshes.count) { [weak discovery] wanted in discovery?.resolve(only: wanted) }
            for (member, report) in zip(meshes, reporters) { member.mesh.onChosenPeersChange(report) }
        }
        let refreshers = meshes.map { $0.mesh.refreshWhileUnlinked(discovery) }
        let targets = meshes.map { (mesh: WeakMesh(mesh: $0.mesh), database: $0.database) }
        return Task {
            defer { for refresher in refreshers { refresher.cancel() } }
            await deliver(discovery.events(), to: targets)
        }
    }

    /// `count` callbacks, one per mesh, each taking that mesh's chosen peers; every call
    /// passes the union of the latest sets of all of them to `report`.
    public static func unionReporters(
        count: Int, report: @escaping @Sendable (Set<String>) -> Void
    ) -> [@Sendable (Set<String>) -> Void] {
        let latest = Mutex([Set<String>](repeating: [], count: count))
        return (0..<count).map { index in
            { chosen in
                let union = latest.withLock { sets in
                    sets[index] = chosen
                    return sets.reduce(into: Set<String>()) { $0.formUnion($1) }
                }
                report(union)
            }
        }
    }

    /// A mesh held weakly by the discovery task (a stopped node's meshes may go).
    public struct WeakMesh: Sendable {
        public weak var mesh: MeshManager?
        public init(mesh: MeshManager) { self.mesh = mesh }
    }

    /// Hands every event of `events` to each mesh in turn, until the stream ends or
    /// every mesh is gone.
    public static func deliver(_ events: AsyncStream<DiscoveryEvent>, to targets: [(mesh: WeakMesh, database: String)]) async {
        for await event in events {
            var alive = false
            for target in targets {
                guard let mesh = target.mesh.mesh else { continue }
                alive = true
                await mesh.handle(event, database: target.database)
            }
            if !alive { return }
        }
    }

    /// What one discovery event means for this mesh of `database`.
    func handle(_ event: DiscoveryEvent, database: String) async {
        switch event {
        case .browsed(let nodeID):
            await peerListed(nodeID: nodeID)
        case .added(let peer), .updated(let peer):
            guard peer.databases.isEmpty || peer.databases.contains(database) else {
                // Of the group but not serving this database (or no longer).
                await peerLost(nodeID: peer.nodeID)
                return
            }
            await peerFound(nodeID: peer.nodeID, url: "ws://\(peer.host):\(peer.port)/\(database)", source: .mdns)
        case .removed(let nodeID):
            await peerLost(nodeID: nodeID)
        case .daemonUnavailable(let reason):
            logger.warning("mDNS unavailable (\(reason)); continuing with static peers")
        case .daemonAvailable:
            logger.info("mDNS available")
        }
    }

    /// Whether discovery should ask the network again: some dialed mDNS peer is unlinked (a
    /// partition may have healed, the peer may have gone or moved), or this node has no link
    /// at all (it may have looked before anyone else was on the network; with a browse that
    /// rests, see ``DiscoveryConfiguration/browseRestsAfter``, it would not look again).
    static func wantsRefresh(_ peers: [MeshPeer]) -> Bool {
        peers.contains { $0.dialing && $0.source == .mdns && $0.connectedSince == nil } || hasNoLink(peers)
    }

    /// Whether none of `peers` is linked: the node may be alone, or new to a mesh that has
    /// not seen it (it refreshes discovery, and its fallback dials start sooner).
    static func hasNoLink(_ peers: [MeshPeer]) -> Bool {
        !peers.contains { $0.connectedSince != nil }
    }

    /// Refreshes `discovery` while ``wantsRefresh(_:)`` (see ``follow(_:meshes:)``), backing
    /// off from 5 s to 60 s.
    func refreshWhileUnlinked(_ discovery: ServiceDiscovery) -> Task<Void, Never> {
        Task { [weak self] in
            var interval = Self.refreshInterval.lowerBound
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                if Self.wantsRefresh(self.peers) {
                    discovery.refresh()
                    interval = min(interval * 2, Self.refreshInterval.upperBound)
                } else {
                    interval = Self.refreshInterval.lowerBound
                }
            }
        }
    }
}
