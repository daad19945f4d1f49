import Discovery
import Foundation

extension MeshManager {
    /// Feeds DNS-SD discoveries into the mesh until `discovery` stops: peers that
    /// serve this database become candidates for the dial rule; a goodbye removes
    /// them. While some dialed peer is unreachable, discovery is refreshed every
    /// few seconds so a healed partition is found again without waiting for caches.
    public func follow(_ discovery: ServiceDiscovery, database: String) -> Task<Void, Never> {
        let refresher = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(5))
                guard let self else { return }
                if self.peers.contains(where: { $0.dialing && $0.source == .mdns && $0.connectedSince == nil }) {
                    discovery.refresh()
                }
            }
        }
        return Task { [weak self] in
            defer { refresher.cancel() }
            for await event in discovery.events() {
                guard let self else { return }
                switch event {
                case .added(let peer), .updated(let peer):
                    guard peer.databases.isEmpty || peer.databases.contains(database) else { continue }
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
