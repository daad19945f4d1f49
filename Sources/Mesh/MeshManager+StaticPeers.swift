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
}
