import Foundation

/// Peers of peers: when two nodes link, each tells the other (in a header of the
/// WebSocket upgrade, `X-Shoal-Mesh-Peers`) which peers it is connected to, so a node
/// can draw the mesh beyond its own links. What a peer reported is kept as it last
/// reported it, with the time of that report.
extension MeshManager {
    /// The upgrade header that carries a node's connected peers (comma-separated node IDs).
    public static let peersHeader = "X-Shoal-Mesh-Peers"

    /// The node IDs of the peers this node is connected to now (reported to new links).
    public var connectedPeerIDs: [String] {
        Array(Set(peers.filter { $0.connectedSince != nil }.compactMap(\.nodeID))).sorted()
    }

    /// Records what `nodeID` reported about its own peers (a header value).
    public func peerReported(nodeID: String, header: String?) {
        guard let header else { return }
        let ids = header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && $0.count <= 128 }.prefix(256)
        state.withLock { $0.reported[nodeID] = (Array(Set(ids)).sorted(), Date()) }
    }

    /// What each peer last reported about its peers: node ID → its peers' node IDs.
    public var peersOfPeers: [String: [String]] {
        state.withLock { $0.reported.mapValues(\.peers) }
    }

    /// The header value that reports this node's connected peers.
    public var peersHeaderValue: String { connectedPeerIDs.joined(separator: ",") }
}
