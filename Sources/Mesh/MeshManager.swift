import BLIP
import DocumentStore
import Foundation
import Logging
import Replication
import Synchronization

/// The mesh of one database: the peers this node knows (from discovery, static
/// configuration, or their own connections), which of them it keeps connections
/// with (`DialRule`), and one continuous push+pull replication per peer it dials.
/// Replicators reconnect by themselves (heartbeats, capped backoff with jitter),
/// so a healed partition reconnects within a few seconds without waiting for mDNS.
public final class MeshManager: Sendable {
    public let configuration: MeshConfiguration
    let store: DocumentStore
    let dialer: any BLIPDialer
    let logger: Logger

    private struct State {
        /// Peers known by node ID → their URL and source.
        var known: [String: (url: String, source: MeshPeer.Source)] = [:]
        /// Active dials by key (node ID, or `static:<url>`).
        var dials: [String: Dial] = [:]
        /// Inbound connections by token.
        var inbound: [Int: Inbound] = [:]
        var nextToken = 0
        var running = false
    }

    struct Dial {
        var replicator: Replicator
        var nodeID: String?
        var url: String
        var source: MeshPeer.Source
        var since: Date
    }

    struct Inbound {
        var nodeID: String?
        var progress: ReplicationProgress
        var since: Date
    }

    private let state = Mutex(State())

    public init(store: DocumentStore, configuration: MeshConfiguration, dialer: any BLIPDialer, logger: Logger = Logger(label: "Mesh")) {
        self.store = store
        self.configuration = configuration
        self.dialer = dialer
        self.logger = logger
    }

    /// Starts dialing the static peers (and any peers already known).
    public func start() async {
        state.withLock { $0.running = true }
        for url in configuration.staticPeers {
            await startDial(key: "static:\(url)", nodeID: nil, url: url, source: .static)
        }
        await reconcile()
    }

    /// Stops every mesh replication (their checkpoints are saved).
    public func stop() async {
        let dials = state.withLock { state in
            state.running = false
            defer { state.dials.removeAll() }
            return Array(state.dials.values)
        }
        for dial in dials { await dial.replicator.stop() }
    }

    /// A peer of this group was found (or moved to a new address).
    public func peerFound(nodeID: String, url: String, source: MeshPeer.Source) async {
        guard nodeID != configuration.nodeID else { return }
        let changed = state.withLock { state -> Bool in
            let previous = state.known[nodeID]
            state.known[nodeID] = (url, source)
            return previous?.url != url
        }
        if changed {
            // A new address: drop the old dial so reconcile re-creates it.
            let old = state.withLock { $0.dials.removeValue(forKey: nodeID) }
            await old?.replicator.stop()
        }
        await reconcile()
    }

    /// A peer announced it is leaving (mDNS goodbye).
    public func peerLost(nodeID: String) async {
        _ = state.withLock { $0.known.removeValue(forKey: nodeID) }
        await reconcile()
    }

    /// Connects to the peers the dial rule assigns to this node and drops the others.
    func reconcile() async {
        let (running, known, dialing) = state.withLock { ($0.running, $0.known, Set($0.dials.keys)) }
        guard running else { return }
        let chosen = DialRule.neighbors(of: configuration.nodeID, among: Set(known.keys), maxPeers: configuration.maxPeers)
        let wanted = Set(chosen.filter { DialRule.shouldDial(local: configuration.nodeID, remote: $0) })
        for nodeID in wanted.subtracting(dialing) {
            guard let peer = known[nodeID] else { continue }
            await startDial(key: nodeID, nodeID: nodeID, url: peer.url, source: peer.source)
        }
        for key in dialing where !key.hasPrefix("static:") && !wanted.contains(key) {
            let dial = state.withLock { $0.dials.removeValue(forKey: key) }
            await dial?.replicator.stop()
        }
    }

    private func startDial(key: String, nodeID: String?, url: String, source: MeshPeer.Source) async {
        let replication = ReplicationConfiguration(
            id: "mesh-\(key)", remote: url, direction: .pushAndPull, continuous: true,
            heartbeat: configuration.heartbeat, maxBackoff: configuration.maxBackoff)
        let replicator = Replicator(store: store, configuration: replication, dialer: dialer, logger: logger)
        let added = state.withLock { state -> Bool in
            guard state.running, state.dials[key] == nil else { return false }
            state.dials[key] = Dial(replicator: replicator, nodeID: nodeID, url: replication.remote, source: source, since: Date())
            return true
        }
        guard added else { return }
        logger.info("mesh \(configuration.group): dialing \(nodeID ?? url) at \(replication.remote)")
        replicator.start()
    }

    /// Registers a connection a peer opened to us; returns a token for `inboundEnded`.
    public func inboundStarted(nodeID: String?, progress: ReplicationProgress) -> Int {
        state.withLock { state in
            let token = state.nextToken
            state.nextToken += 1
            state.inbound[token] = Inbound(nodeID: nodeID, progress: progress, since: Date())
            return token
        }
    }

    public func inboundEnded(_ token: Int) {
        _ = state.withLock { $0.inbound.removeValue(forKey: token) }
    }

    /// Every peer: dialed ones with their replication status, accepted connections.
    public var peers: [MeshPeer] {
        let (dials, inbound) = state.withLock { (Array($0.dials.values), Array($0.inbound.values)) }
        var result: [MeshPeer] = dials.map { dial in
            let status = dial.replicator.status
            let connected = status.state == .running || status.state == .idle
            return MeshPeer(
                nodeID: dial.nodeID, url: dial.url, source: dial.source, dialing: true,
                state: status.state.rawValue, connectedSince: connected ? dial.since : nil,
                docsPushed: status.docsPushed, docsPulled: status.docsPulled, lastError: status.lastError)
        }
        result += inbound.map { link in
            let status = link.progress.status
            return MeshPeer(
                nodeID: link.nodeID, url: nil, source: .inbound, dialing: false, state: "connected",
                connectedSince: link.since, docsPushed: status.docsPushed, docsPulled: status.docsPulled,
                lastError: status.lastError)
        }
        return result.sorted { ($0.nodeID ?? $0.url ?? "") < ($1.nodeID ?? $1.url ?? "") }
    }

    /// Counts for metrics: connected peers, documents in and out.
    public var totals: (connected: Int, pushed: Int, pulled: Int) {
        peers.reduce((0, 0, 0)) { sum, peer in
            (sum.0 + (peer.connectedSince != nil ? 1 : 0), sum.1 + peer.docsPushed, sum.2 + peer.docsPulled)
        }
    }
}
