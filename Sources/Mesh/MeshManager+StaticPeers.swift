import BLIP
import DocumentModel
import Foundation
import Replication

extension MeshManager {
    /// Adds a static peer (`ws://host:port/db`) at run time and dials it.
    public func addStaticPeer(_ url: String) async {
        await startStaticDial(url)
    }

    /// Dials a static peer and, in the background, learns its node ID from
    /// `GET /` so that a pair of nodes listing each other keeps one link.
    func startStaticDial(_ url: String) async {
        await startDial(key: Self.staticPrefix + url, nodeID: nil, url: url, source: .static)
        let task = Task { [weak self] in
            while !Task.isCancelled {
                if let id = await Self.fetchNodeID(url) {
                    self?.learnedStaticID(url: url, nodeID: id)
                    return
                }
                try? await Task.sleep(for: .seconds(2))
            }
        }
        addBackgroundTask(task)
    }

    /// A dial to `remote` (the normalized URL) reached node `nodeID` (it answered the
    /// upgrade with its ID, proven when the mesh has a secret): identifies a static peer
    /// whose `GET /` cannot be read (an HTTPS-only port with a private certificate).
    public func linked(remote: String, nodeID: String) {
        let urls = state.withLock { state in
            state.dials.values.filter { $0.url == remote }.compactMap(\.staticURL)
        }
        for url in urls where state.withLock({ $0.staticIDs[url] }) != nodeID {
            learnedStaticID(url: url, nodeID: nodeID)
        }
    }

    /// The node ID a Shoal node reports in `GET /` (nil for other servers or errors).
    static func fetchNodeID(_ url: String) async -> String? {
        guard let target = ReplicationConfiguration.httpURL(forRemote: url, path: "/") else { return nil }
        guard let response = try? await PeerHTTPRequest(url: target, timeout: .seconds(5)).send(), response.status == 200 else {
            return nil
        }
        return (try? JSON.parse(response.body))?["node_id"]?.stringValue
    }

    /// Whether to accept a link `nodeID` opens: not when this node is the rule's
    /// dialer for the pair and already has its own link up (a race; the peer
    /// stands its dial down, see `inboundStarted`).
    public func acceptsInbound(from nodeID: String) -> Bool {
        guard DialRule.shouldDial(local: configuration.nodeID, remote: nodeID) else { return true }
        return !hasConnectedDial(to: nodeID)
    }

    /// What `planStaticDials` decided.
    struct StaticPlan: Equatable {
        /// Static peer URLs whose dial stops (the rule does not pick the peer).
        var prune: Set<String> = []
        /// Pruned static peer URLs to dial again (the rule picks the peer now).
        var restore: Set<String> = []
    }

    /// The pure decision for static peers whose node ID is known: they count for the
    /// dial rule like discovered ones, so a node listing more static peers than
    /// `max_peers` keeps links with the rule's picks only (`chosen`, replacements for
    /// unreachable peers included) instead of all of them. Peers whose ID is not known
    /// yet stay dialed; a peer that is pruned here still links to us if its own rule
    /// picks us (accepted connections are never refused for the bound).
    static func planStaticDials(staticIDs: [String: String], pruned: [String: String], chosen: Set<String>) -> StaticPlan {
        var plan = StaticPlan()
        for (url, nodeID) in staticIDs {
            if chosen.contains(nodeID) {
                if pruned[url] != nil { plan.restore.insert(url) }
            } else if pruned[url] == nil {
                plan.prune.insert(url)
            }
        }
        return plan
    }

    /// Stops the static dials the rule does not pick and dials again those it picks now.
    func pruneStaticDials(chosen: Set<String>) async {
        let (stopped, restore) = state.withLock { state -> ([Dial], [String]) in
            guard state.running else { return ([], []) }
            let plan = Self.planStaticDials(staticIDs: state.staticIDs, pruned: state.pruned, chosen: chosen)
            var stopped: [Dial] = []
            for url in plan.prune {
                state.pruned[url] = state.staticIDs[url]
                // A yielded dial (the peer links to us) is not restarted when that link ends.
                state.yielded.removeValue(forKey: url)
                if let dial = state.dials.removeValue(forKey: Self.staticPrefix + url) { stopped.append(dial) }
            }
            for url in plan.restore { state.pruned.removeValue(forKey: url) }
            return (stopped, plan.restore.sorted())
        }
        for dial in stopped {
            logger.info("mesh \(configuration.group): more peers than max_peers \(configuration.maxPeers); not dialing the static peer \(dial.url)")
            await dial.replicator.stop()
        }
        for url in restore { await redialStatic(url) }
    }

    /// Dials static peer `url` again (its dial had stood down or been pruned); stands
    /// down at once when the peer already links to us and the rule makes it the dialer.
    func redialStatic(_ url: String) async {
        await startDial(key: Self.staticPrefix + url, nodeID: nil, url: url, source: .static)
        guard let nodeID = state.withLock({ $0.staticIDs[url] }) else { return }
        if state.withLock({ $0.inbound.values.contains { $0.nodeID == nodeID } }) {
            await standDownStaticDials(to: nodeID)
        }
    }
}
