import Foundation

/// Partitions of a large mesh: the dial rule links each node to a few ring neighbors,
/// which a partition may put on the other side. A node whose neighbors are all across
/// the cut would be alone on its side, and its side in pieces. So while some of the
/// rule's neighbors are unlinked:
///
/// - every known peer that is not linked is probed (a TCP connection, in parallel,
///   `MeshManager+Probe.swift`) once the first neighbor has been unlinked for a
///   fallback delay, and again every `probeInterval`: those that do not answer are
///   unreachable, those that do are not;
/// - a chosen peer unlinked for `unreachableAfter` is unreachable too;
/// - the node links to the rule's neighbors among all peers (still dialed, so the
///   links come back at the heal) and to the rule's neighbors among the peers not
///   known to be unreachable (`DialRule.neighbors(…, unreachable:)`), so its side of
///   the partition stays linked.
///
/// Once every one of the rule's neighbors is linked again (the heal) the unreachable
/// set is cleared and the extra links stop.
extension MeshManager {
    /// How long a chosen peer stays unlinked before it is taken as unreachable: a
    /// fallback delay (the peer may dial us) plus a dial's timeout.
    var unreachableAfter: Duration { fallbackDelay * 2 }

    /// How often unlinked peers are probed while the mesh is cut.
    static let probeInterval = Duration.seconds(20)

    /// What `planReachability` decided.
    struct ReachabilityPlan: Equatable {
        var unlinkedSince: [String: ContinuousClock.Instant] = [:]
        var unreachable: Set<String> = []
        /// Probe the unlinked peers now.
        var probe = false
    }

    /// The pure decision: `ideal` are the rule's neighbors among every known peer,
    /// `chosen` the peers this node links to now (ideal and replacements), `linked` the
    /// peers with a link up (either direction).
    static func planReachability(
        ideal: Set<String>, chosen: Set<String>, linked: Set<String>,
        unlinkedSince: [String: ContinuousClock.Instant], unreachable: Set<String>,
        now: ContinuousClock.Instant, after: Duration,
        lastProbe: ContinuousClock.Instant? = nil, probeAfter: Duration = .seconds(6), probeInterval: Duration = MeshManager.probeInterval
    ) -> ReachabilityPlan {
        // Every neighbor of the rule is linked: the mesh is whole, nothing is unreachable.
        if ideal.isSubset(of: linked) { return ReachabilityPlan() }
        var plan = ReachabilityPlan(unreachable: unreachable.subtracting(linked))
        for nodeID in chosen where !linked.contains(nodeID) {
            let since = unlinkedSince[nodeID] ?? now
            plan.unlinkedSince[nodeID] = since
            if since.duration(to: now) >= after { plan.unreachable.insert(nodeID) }
        }
        let cut = ideal.contains { nodeID in
            !linked.contains(nodeID) && (plan.unlinkedSince[nodeID].map { $0.duration(to: now) >= probeAfter } ?? false)
        }
        plan.probe = cut && (lastProbe.map { $0.duration(to: now) >= probeInterval } ?? true)
        return plan
    }

    /// The unreachable set after a probe: peers that answered leave it, the others join.
    static func applyProbe(_ answers: [String: Bool], to unreachable: Set<String>) -> Set<String> {
        unreachable.subtracting(answers.filter(\.value).keys).union(answers.filter { !$0.value }.keys)
    }

    /// Updates the unreachable set; when it changed, the dials follow (`reconcile`).
    func checkReachability(now: ContinuousClock.Instant) async {
        let linked = Set(connectedPeerIDs)
        let outcome = state.withLock { state -> (changed: Bool, cleared: Bool, probe: [String: String]?)? in
            guard state.running else { return nil }
            let nodes = Self.nodes(state)
            let ideal = DialRule.neighbors(of: configuration.nodeID, among: nodes, maxPeers: configuration.maxPeers)
            let chosen = DialRule.neighbors(
                of: configuration.nodeID, among: nodes, maxPeers: configuration.maxPeers, unreachable: state.unreachable)
            let plan = Self.planReachability(
                ideal: ideal, chosen: chosen, linked: linked, unlinkedSince: state.unlinkedSince,
                unreachable: state.unreachable, now: now, after: unreachableAfter,
                lastProbe: state.lastProbe, probeAfter: fallbackDelay, probeInterval: Self.probeInterval)
            state.unlinkedSince = plan.unlinkedSince
            var targets: [String: String]?
            if plan.probe && !state.probing {
                state.probing = true
                state.lastProbe = now
                var unlinked = state.known.filter { !linked.contains($0.key) }.mapValues(\.url)
                for (url, nodeID) in state.staticIDs where !linked.contains(nodeID) && unlinked[nodeID] == nil {
                    unlinked[nodeID] = url
                }
                targets = unlinked
            }
            let changed = plan.unreachable != state.unreachable
            state.unreachable = plan.unreachable
            return (changed, plan.unreachable.isEmpty, targets)
        }
        guard let outcome else { return }
        if let targets = outcome.probe {
            let task = Task { [weak self] in
                guard let self else { return }
                await self.probePeers(targets)
            }
            addBackgroundTask(task)
        }
        guard outcome.changed else { return }
        if outcome.cleared {
            logger.info("mesh \(configuration.group): every neighbor is linked again; extra links stop")
        }
        await reconcile()
    }

    /// Probes every target at once and records who answered.
    func probePeers(_ targets: [String: String]) async {
        let answers = await withTaskGroup(of: (String, Bool).self) { group in
            for (nodeID, url) in targets {
                group.addTask { (nodeID, await self.probe(url)) }
            }
            return await group.reduce(into: [String: Bool]()) { $0[$1.0] = $1.1 }
        }
        let changed = state.withLock { state -> Bool in
            state.probing = false
            // (Had the mesh become whole meanwhile, the next check clears this again.)
            guard state.running else { return false }
            let updated = Self.applyProbe(answers, to: state.unreachable)
            defer { state.unreachable = updated }
            return updated != state.unreachable
        }
        let down = answers.values.filter { !$0 }.count
        logger.info("mesh \(configuration.group): probed \(answers.count) unlinked peers: \(answers.count - down) answer, \(down) do not")
        if changed { await reconcile() }
    }
}
