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
/// A peer that the rule makes the dialer but that has not linked to us for a while
/// (it may not have discovered us: mDNS is lossy) is dialed by us as a fallback
/// (`MeshManager+Fallback.swift`).
public final class MeshManager: Sendable {
    public let configuration: MeshConfiguration
    let store: DocumentStore
    let dialer: any BLIPDialer
    /// Fired when a link comes up (dialed again, or accepted): the other links that wait
    /// to reconnect try at once (`ReconnectSignal`).
    let reconnectSignal = ReconnectSignal()
    let logger: Logger

    struct State {
        /// Peers known by node ID → their URL and source.
        var known: [String: (url: String, source: MeshPeer.Source)] = [:]
        /// Peers seen by a discovery that resolves on demand, not resolved yet (no URL):
        /// they count for the dial rule, and those it picks are resolved (`onChosen`).
        var listed: Set<String> = []
        /// Told the peers the rule picks whenever they change (`MeshManager+Discovery.swift`);
        /// called with the state locked, so it must not call back into the mesh.
        var onChosen: (@Sendable (Set<String>) -> Void)?
        var lastChosen: Set<String>?
        /// Active dials by key (node ID, or `static:<url>`).
        var dials: [String: Dial] = [:]
        /// Inbound connections by token.
        var inbound: [Int: Inbound] = [:]
        var nextToken = 0
        var running = false
        /// Node IDs of static peers, by URL, once learned.
        var staticIDs: [String: String] = [:]
        /// Static peers whose dial stands down while the peer's own link to us is up.
        var yielded: [String: String] = [:]
        /// Static peers (URL → node ID) not dialed because the dial rule does not pick
        /// them (`MeshManager+StaticPeers.swift`); dialed again once it does.
        var pruned: [String: String] = [:]
        /// Peers the rule makes the dialer, by node ID: since when no link of theirs is up.
        var waitingSince: [String: ContinuousClock.Instant] = [:]
        /// Chosen peers not linked, by node ID: since when (`MeshManager+Reachability.swift`).
        var unlinkedSince: [String: ContinuousClock.Instant] = [:]
        /// Peers found unreachable while some of the rule's neighbors are unlinked.
        var unreachable: Set<String> = []
        /// Reconciles, one pass at a time (`reconcile()`).
        var reconciles = SerialPasses()
        /// When the peers were last probed (`MeshManager+Reachability.swift`), and whether a probe runs.
        var lastProbe: ContinuousClock.Instant?
        var probing = false
        var background: [Task<Void, Never>] = []
        /// What each peer reported about its own peers when it last linked (`MeshManager+Neighbors.swift`).
        var reported: [String: (peers: [String], at: Date)] = [:]
        /// Peers that linked to us (node IDs), kept until discovery says they left: the
        /// mesh is not in step while one the rule picks has no link (`MeshManager+Convergence.swift`).
        var met: Set<String> = []
    }

    struct Dial {
        /// The dial's key: the peer's node ID, or `static:<configured URL>`.
        var key: String
        var replicator: Replicator
        var nodeID: String?
        var url: String
        var source: MeshPeer.Source
        var since: Date

        /// The configured URL of a static peer's dial (its key without the prefix).
        var staticURL: String? { key.hasPrefix(MeshManager.staticPrefix) ? String(key.dropFirst(MeshManager.staticPrefix.count)) : nil }
    }

    /// Dial keys of static peers start with this, followed by the configured URL.
    static let staticPrefix = "static:"

    struct Inbound {
        var nodeID: String?
        var progress: ReplicationProgress
        var since: Date
    }

    let state = Mutex(State())

    /// Every collection of the database with its store (empty: the default one alone);
    /// each link replicates all those the peer also has.
    let collections: [(name: CollectionName, store: DocumentStore)]
    /// Whether a peer's URL answers at all (a TCP connection within a timeout).
    let probe: @Sendable (_ url: String) async -> Bool

    public init(
        store: DocumentStore, configuration: MeshConfiguration, dialer: any BLIPDialer, logger: Logger = Logger(label: "Mesh"),
        collections: [(name: CollectionName, store: DocumentStore)] = [],
        probe: @escaping @Sendable (_ url: String) async -> Bool = { await MeshManager.tcpProbe($0) }
    ) {
        self.probe = probe
        self.store = store
        self.collections = collections.count > 1 ? collections : []
        self.configuration = configuration
        self.dialer = dialer
        self.logger = logger
    }

    /// Starts dialing the static peers (and any peers already known).
    public func start() async {
        state.withLock { $0.running = true }
        for url in configuration.staticPeers {
            await startStaticDial(url)
        }
        startPeriodicChecks()
        await reconcile()
    }

    /// Stops every mesh replication (their checkpoints are saved).
    public func stop() async {
        let (dials, background) = state.withLock { state in
            state.running = false
            defer {
                state.dials.removeAll()
                state.background.removeAll()
            }
            return (Array(state.dials.values), state.background)
        }
        for task in background { task.cancel() }
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
            // A new address: drop the old dials so reconcile (or the next fallback
            // check) re-creates them.
            let old = state.withLock { state in
                [state.dials.removeValue(forKey: nodeID), state.dials.removeValue(forKey: Self.fallbackPrefix + nodeID)]
            }
            for dial in old { await dial?.replicator.stop() }
        }
        await reconcile()
    }

    /// A peer of this group was seen but not resolved yet (its address is not known): it
    /// counts for the dial rule; if the rule picks it, `onChosen` asks for its address.
    public func peerListed(nodeID: String) async {
        guard nodeID != configuration.nodeID else { return }
        let added = state.withLock { $0.listed.insert(nodeID).inserted }
        if added { await reconcile() }
    }

    /// A peer announced it is leaving (mDNS goodbye).
    public func peerLost(nodeID: String) async {
        state.withLock { state in
            state.known.removeValue(forKey: nodeID)
            state.listed.remove(nodeID)
            state.met.remove(nodeID)
        }
        await reconcile()
    }

    /// Every node of the group this node knows of, with or without an address, static
    /// peers whose node ID is known included.
    static func nodes(_ state: State) -> Set<String> {
        state.listed.union(state.known.keys).union(state.staticIDs.values)
    }

    /// Connects to the peers the dial rule assigns to this node and drops the others.
    ///
    /// Reconciles never overlap: one asked for while another runs makes that one run
    /// again, with the state of then. Overlapping ones could finish out of order, and a
    /// reconcile computed from an older view of the peers then undid a newer one for
    /// good: a static dial the newer one had pruned came back (restored by the older
    /// picks) and nothing reconciled again (`MeshStaticPeersBoundTests`, under load).
    func reconcile() async {
        guard state.withLock({ $0.reconciles.request() }) else { return }
        repeat {
            await reconcileOnce()
        } while state.withLock { $0.reconciles.passEnded() }
    }

    /// One pass of `reconcile()`.
    private func reconcileOnce() async {
        let (running, known, nodes, dialing, unreachable) = state.withLock {
            ($0.running, $0.known, Self.nodes($0), Set($0.dials.keys), $0.unreachable)
        }
        guard running else { return }
        let chosen = DialRule.neighbors(
            of: configuration.nodeID, among: nodes, maxPeers: configuration.maxPeers, unreachable: unreachable)
        // Told under the lock, so that racing reconciles cannot leave an older set last
        // (the callback only posts to the discovery thread).
        state.withLock { state in
            guard state.lastChosen != chosen else { return }
            state.lastChosen = chosen
            state.onChosen?(chosen)
        }
        let wanted = Set(chosen.filter { DialRule.shouldDial(local: configuration.nodeID, remote: $0) })
        for nodeID in wanted.subtracting(dialing) {
            guard let peer = known[nodeID] else { continue }
            await startDial(key: nodeID, nodeID: nodeID, url: peer.url, source: peer.source)
        }
        for key in dialing where !key.hasPrefix(Self.staticPrefix) && !key.hasPrefix(Self.fallbackPrefix) && !wanted.contains(key) {
            let dial = state.withLock { $0.dials.removeValue(forKey: key) }
            await dial?.replicator.stop()
        }
        await pruneStaticDials(chosen: chosen)
    }

    func addBackgroundTask(_ task: Task<Void, Never>) {
        let keep = state.withLock { state -> Bool in
            guard state.running else { return false }
            state.background.append(task)
            return true
        }
        if !keep { task.cancel() }
    }

    /// Records a static peer's node ID; if that peer already links to us and the
    /// rule makes it the dialer, our static dial stands down.
    func learnedStaticID(url: String, nodeID: String) {
        state.withLock { $0.staticIDs[url] = nodeID }
        if state.withLock({ $0.inbound.values.contains { $0.nodeID == nodeID } }) {
            Task { await self.standDownStaticDials(to: nodeID) }
        }
        // The peer now counts for the dial rule (and may not be picked).
        Task { await self.reconcile() }
    }

    /// True when a dial to `nodeID` (mDNS or identified static) is connected.
    func hasConnectedDial(to nodeID: String) -> Bool {
        let dials = state.withLock { state in
            state.dials.values.filter { dial in
                dial.nodeID == nodeID || (dial.staticURL.flatMap { state.staticIDs[$0] } == nodeID)
            }
        }
        return dials.contains { [.running, .idle].contains($0.replicator.status.state) }
    }

    /// Stops static dials to `nodeID` when the rule makes the peer the dialer.
    func standDownStaticDials(to nodeID: String) async {
        guard !DialRule.shouldDial(local: configuration.nodeID, remote: nodeID) else { return }
        let stopped = state.withLock { state -> [Dial] in
            let urls = state.staticIDs.filter { $0.value == nodeID }.map(\.key)
            var stopped: [Dial] = []
            for url in urls {
                if let dial = state.dials.removeValue(forKey: Self.staticPrefix + url) {
                    stopped.append(dial)
                    state.yielded[url] = nodeID
                }
            }
            return stopped
        }
        for dial in stopped {
            logger.info("mesh \(configuration.group): \(nodeID) dials us; standing down the static link to \(dial.url)")
            await dial.replicator.stop()
        }
    }

    func startDial(key: String, nodeID: String?, url: String, source: MeshPeer.Source) async {
        var replication = ReplicationConfiguration(
            id: "mesh-\(key)", remote: url, direction: .pushAndPull, continuous: true,
            heartbeat: configuration.heartbeat, maxBackoff: configuration.maxBackoff)
        // A refusal (a peer's clock off by more than the proof window, a secret or a
        // database not configured yet) may be fixed on the other side: keep redialing.
        replication.retryRefusals = true
        // The peer's ID, once a static link learned it, names the revisions it sends.
        let replicator = Replicator(
            store: store, configuration: replication, dialer: dialer, logger: logger, collections: collections,
            sharedCollectionsOnly: true, reconnectSignal: reconnectSignal
        ) { [weak self] in
            nodeID ?? self?.state.withLock { state in state.dials[key]?.staticURL.flatMap { state.staticIDs[$0] } }
        }
        let added = state.withLock { state -> Bool in
            guard state.running, state.dials[key] == nil else { return false }
            state.dials[key] = Dial(key: key, replicator: replicator, nodeID: nodeID, url: replication.remote, source: source, since: Date())
            return true
        }
        guard added else { return }
        logger.info("mesh \(configuration.group): dialing \(nodeID ?? url) at \(replication.remote)")
        replicator.start()
    }

    /// Links waiting to reconnect try now (a fault was lifted, a partition healed).
    public func redialNow() {
        reconnectSignal.fire()
    }

    /// Registers a connection a peer opened to us; returns a token for `inboundEnded`.
    public func inboundStarted(nodeID: String?, progress: ReplicationProgress) -> Int {
        // A peer reached us: links waiting to reconnect try now (a fault may have healed).
        reconnectSignal.fire()
        return state.withLock { state in
            let token = state.nextToken
            state.nextToken += 1
            state.inbound[token] = Inbound(nodeID: nodeID, progress: progress, since: Date())
            if let nodeID, nodeID != configuration.nodeID { state.met.insert(nodeID) }
            return token
        }
    }

    /// Call once the inbound link is registered: a static dial to the same peer
    /// stands down when the peer is the rule's dialer.
    public func inboundConnected(nodeID: String?) async {
        guard let nodeID else { return }
        await standDownStaticDials(to: nodeID)
        await standDownFallbackDial(to: nodeID)
    }

    public func inboundEnded(_ token: Int) {
        let ended = state.withLock { $0.inbound.removeValue(forKey: token) }
        guard let nodeID = ended?.nodeID else { return }
        // The peer's link is gone: our static dial to it takes over again.
        let urls = state.withLock { state -> [String] in
            guard !state.inbound.values.contains(where: { $0.nodeID == nodeID }) else { return [] }
            let urls = state.yielded.filter { $0.value == nodeID }.map(\.key)
            for url in urls { state.yielded.removeValue(forKey: url) }
            return urls
        }
        for url in urls { Task { await self.redialStatic(url) } }
    }

    /// Every peer: dialed ones with their replication status, accepted connections; each
    /// with its link's state (`LinkState`, documents pending not counted: see `convergence()`).
    public var peers: [MeshPeer] {
        peerLinks().map { entry in
            var peer = entry.peer
            peer.link = entry.progress.linkStateEstimate(reportMaxAge: configuration.reportMaxAge)
            return peer
        }
    }

    /// Every peer (as `peers`, without link states) with the progress of its link.
    func peerLinks() -> [(peer: MeshPeer, progress: ReplicationProgress)] {
        let (dials, inbound, staticIDs) = state.withLock { (Array($0.dials.values), Array($0.inbound.values), $0.staticIDs) }
        let now = Date()
        let latest = store.info().updateSequence
        var result: [(peer: MeshPeer, progress: ReplicationProgress)] = dials.map { dial in
            let nodeID = dial.nodeID ?? dial.staticURL.flatMap { staticIDs[$0] }
            let status = dial.replicator.status
            let connected = status.isConnected
            var peer = MeshPeer(
                nodeID: nodeID, url: dial.url, source: dial.source, dialing: true,
                fallback: dial.key.hasPrefix(Self.fallbackPrefix),
                state: status.state.rawValue, connectedSince: connected ? (status.stateSince ?? dial.since) : nil,
                docsPushed: status.docsPushed, docsPulled: status.docsPulled,
                bytesSent: status.bytesSent, bytesReceived: status.bytesReceived, lastError: status.lastError)
            peer.revisions = status.revisions
            peer.lastHeard = connected ? now : status.stateSince.flatMap { since in status.docsPulled + status.bytesReceived > 0 ? since : nil }
            peer.sequencesBehind = status.pushedThrough.map { Int(latest >= $0 ? latest - $0 : 0) }
            return (peer, dial.replicator.progress)
        }
        result += inbound.map { link in
            let status = link.progress.status
            var peer = MeshPeer(
                nodeID: link.nodeID, url: nil, source: .inbound, dialing: false, state: "connected",
                connectedSince: link.since, docsPushed: status.docsPushed, docsPulled: status.docsPulled,
                bytesSent: status.bytesSent, bytesReceived: status.bytesReceived, lastError: status.lastError)
            peer.lastHeard = now
            peer.revisions = status.revisions
            return (peer, link.progress)
        }
        return result.sorted { ($0.peer.nodeID ?? $0.peer.url ?? "") < ($1.peer.nodeID ?? $1.peer.url ?? "") }
    }

    /// Counts for metrics: connected peers (a peer linked both ways for a moment counts
    /// once), documents and bytes in and out.
    public var totals: MeshTotals {
        var connectedIDs = Set<String>()
        return peers.reduce(into: MeshTotals()) { sum, peer in
            if peer.connectedSince != nil, peer.nodeID.map({ connectedIDs.insert($0).inserted }) ?? true { sum.connected += 1 }
            sum.pushed += peer.docsPushed
            sum.pulled += peer.docsPulled
            sum.bytesOut += peer.bytesSent
            sum.bytesIn += peer.bytesReceived
            sum.revisions = sum.revisions + peer.revisions
        }
    }
}
