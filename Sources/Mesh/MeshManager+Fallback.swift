import Foundation

/// Fallback dials: the dial rule gives each pair one dialer, so a pair whose dialer never
/// discovered the other side (a lost mDNS announcement, a browse that missed it) would
/// stay unlinked although the other side knows it. The side that knows a peer, is not
/// its dialer, and has had no link from it for `fallbackDelay` dials it itself. The
/// fallback stands down as soon as the peer's own link comes up, so the pair ends with
/// the rule's one link again.
///
/// A node with no link at all waits only `isolatedFallbackDelay`: it is most often a node
/// that joined a mesh whose browses rest (``DiscoveryConfiguration/browseRestsAfter``), so
/// the rule's dialers will not see it until something makes them look again, and the
/// fallback is how it gets in. Should a dialer's link come up as well, the fallback stands
/// down as usual: the cost is one handshake.
extension MeshManager {
    /// Dial keys of fallback dials start with this, followed by the peer's node ID.
    static let fallbackPrefix = "fallback:"

    /// How long a peer that should dial us may stay unlinked before we dial it.
    var fallbackDelay: Duration { max(.seconds(5), configuration.heartbeat * 3) }

    /// The same wait for a node that has no link at all.
    static let isolatedFallbackDelay = Duration.seconds(1)

    /// The fallback delay that applies now: short while this node has no link at all.
    static func fallbackDelay(isolated: Bool, normal: Duration) -> Duration {
        isolated ? min(isolatedFallbackDelay, normal) : normal
    }

    /// What to change, as decided by `planFallbacks`.
    struct FallbackPlan: Equatable {
        /// Peers to dial as a fallback: node ID → URL.
        var start: [String: String] = [:]
        /// Node IDs whose fallback dial should stop.
        var stop: Set<String> = []
        /// The new `waitingSince`.
        var waitingSince: [String: ContinuousClock.Instant] = [:]
    }

    /// The pure decision: for every chosen mDNS peer the rule makes the dialer, how long
    /// it has been without a link to us, and so which fallback dials to start or stop.
    static func planFallbacks(
        local: String, maxPeers: Int, known: [String: (url: String, source: MeshPeer.Source)], listed: Set<String> = [],
        linkedFrom: Set<String>, fallbacks: Set<String>, waitingSince: [String: ContinuousClock.Instant],
        now: ContinuousClock.Instant, delay: Duration, unreachable: Set<String> = []
    ) -> FallbackPlan {
        var plan = FallbackPlan()
        let chosen = DialRule.neighbors(of: local, among: listed.union(known.keys), maxPeers: maxPeers, unreachable: unreachable)
        var candidates = Set<String>()
        for nodeID in chosen where !DialRule.shouldDial(local: local, remote: nodeID) {
            guard let peer = known[nodeID], peer.source == .mdns else { continue }
            candidates.insert(nodeID)
            if linkedFrom.contains(nodeID) {
                if fallbacks.contains(nodeID) { plan.stop.insert(nodeID) }
                continue
            }
            let since = waitingSince[nodeID] ?? now
            plan.waitingSince[nodeID] = since
            if !fallbacks.contains(nodeID) && since.duration(to: now) >= delay {
                plan.start[nodeID] = peer.url
            }
        }
        // Peers no longer known or no longer chosen keep no fallback.
        plan.stop.formUnion(fallbacks.subtracting(candidates))
        return plan
    }

    /// Checks reachability and the fallbacks every second until the mesh stops.
    func startPeriodicChecks() {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                guard let self else { return }
                await self.checkReachability(now: .now)
                await self.checkFallbacks(now: .now)
            }
        }
        addBackgroundTask(task)
    }

    func checkFallbacks(now: ContinuousClock.Instant) async {
        let delay = Self.fallbackDelay(isolated: Self.hasNoLink(peers), normal: fallbackDelay)
        let (plan, stopped) = state.withLock { state -> (FallbackPlan, [Dial]) in
            guard state.running else { return (FallbackPlan(), []) }
            let fallbacks = Set(state.dials.keys.filter { $0.hasPrefix(Self.fallbackPrefix) }.map { String($0.dropFirst(Self.fallbackPrefix.count)) })
            let plan = Self.planFallbacks(
                local: configuration.nodeID, maxPeers: configuration.maxPeers, known: state.known, listed: state.listed,
                linkedFrom: Set(state.inbound.values.compactMap(\.nodeID)), fallbacks: fallbacks,
                waitingSince: state.waitingSince, now: now, delay: delay, unreachable: state.unreachable)
            state.waitingSince = plan.waitingSince
            let stopped = plan.stop.compactMap { state.dials.removeValue(forKey: Self.fallbackPrefix + $0) }
            return (plan, stopped)
        }
        for dial in stopped { await dial.replicator.stop() }
        for (nodeID, url) in plan.start.sorted(by: { $0.key < $1.key }) {
            logger.info("mesh \(configuration.group): \(nodeID) has not linked to us for \(delay); dialing it as a fallback")
            await startDial(key: Self.fallbackPrefix + nodeID, nodeID: nodeID, url: url, source: .mdns)
        }
    }

    /// The peer's own link is up: our fallback dial to it stops.
    func standDownFallbackDial(to nodeID: String) async {
        let dial = state.withLock { state -> Dial? in
            state.waitingSince[nodeID] = nil
            return state.dials.removeValue(forKey: Self.fallbackPrefix + nodeID)
        }
        guard let dial else { return }
        logger.info("mesh \(configuration.group): \(nodeID) linked to us; our fallback dial stands down")
        await dial.replicator.stop()
    }
}
