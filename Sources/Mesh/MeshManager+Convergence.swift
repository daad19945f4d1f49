import BLIP
import Replication

/// Convergence accounting of the mesh (docs/architecture.md, the mesh): each link's
/// progress keeps what its sessions report (`LinkState`: pending each way, idle, in
/// step); here it is gathered per peer, and the database is in step with the mesh when
/// every link is.
extension MeshManager {
    /// Every peer with its link's state, documents pending counted in the stores, and
    /// whether the database is in step with all of them (true with no peers).
    public func convergence() async -> MeshConvergence {
        var peers: [MeshPeer] = []
        for (peer, progress) in peerLinks() {
            var counted = peer
            counted.link = await progress.linkState(reportMaxAge: configuration.reportMaxAge)
            peers.append(counted)
        }
        return MeshConvergence(peers: peers, lastSequence: store.committedSequence, unlinked: unlinked(peers))
    }

    /// As `convergence()`, without reading the stores (documents pending not counted).
    public var convergenceEstimate: MeshConvergence {
        let peers = self.peers
        return MeshConvergence(peers: peers, lastSequence: store.committedSequence, unlinked: unlinked(peers))
    }

    /// The peers the dial rule picks as this node's neighbors (among those it knows: by
    /// discovery, static configuration, or because they linked to it) that have no link
    /// up: a node cut off from them cannot be in step, even with no link listed at all.
    func unlinked(_ peers: [MeshPeer]) -> [String] {
        let nodes = state.withLock { Self.nodes($0).union($0.met) }
        let linked = Set(peers.filter { $0.connectedSince != nil }.compactMap(\.nodeID))
        let chosen = DialRule.neighbors(of: configuration.nodeID, among: nodes, maxPeers: configuration.maxPeers)
        return chosen.subtracting(linked).sorted()
    }

    /// The progress of the link that runs over `connection` (nil until a session of the
    /// link has started on it).
    public func linkProgress(carrying connection: BLIPConnection) -> ReplicationProgress? {
        let (dials, inbound) = state.withLock { (Array($0.dials.values), Array($0.inbound.values)) }
        return dials.map(\.replicator.progress).first { $0.carries(connection) }
            ?? inbound.map(\.progress).first { $0.carries(connection) }
    }
}

/// The peers of one database's mesh with their links' states, and whether the database
/// is in step with every one (`GET /{db}/_peers`).
public struct MeshConvergence: Sendable {
    public var peers: [MeshPeer]
    /// This database's latest committed sequence.
    public var lastSequence: UInt64
    /// Node IDs of the peers the dial rule picks that have no link up.
    public var unlinked: [String]

    public init(peers: [MeshPeer], lastSequence: UInt64, unlinked: [String] = []) {
        self.peers = peers
        self.lastSequence = lastSequence
        self.unlinked = unlinked
    }

    /// Every link in step and every peer the rule picks linked (true with no peers).
    public var inStep: Bool { unlinked.isEmpty && peers.allSatisfy(\.inStep) }

    /// Per peer (node ID, or address while a static peer is not identified), its links
    /// summed: a peer linked both ways for a moment is one peer, in step when every link is.
    public var byPeer: [(peer: String, pendingSend: Int, pendingReceive: Int?, inStep: Bool)] {
        var order: [String] = []
        var sums: [String: (send: Int, receive: Int?, inStep: Bool)] = [:]
        for peer in peers {
            let key = peer.nodeID ?? peer.url ?? "?"
            let link = peer.link ?? LinkState()
            if let sum = sums[key] {
                let receive = sum.receive.flatMap { total in link.pendingReceive.map { total + $0.sequences } }
                sums[key] = (sum.send + link.pendingSend.sequences, receive, sum.inStep && link.inStep)
            } else {
                order.append(key)
                sums[key] = (link.pendingSend.sequences, link.pendingReceive?.sequences, link.inStep)
            }
        }
        return order.map { key in (key, sums[key]!.send, sums[key]!.receive, sums[key]!.inStep) }
    }
}

extension MeshManager {
    /// This database's latest committed sequence (reported to peers as `seq`).
    public var lastSequence: UInt64 { store.committedSequence }
}
