import BLIP
import Mesh
import Replication
import Synchronization

/// Keeps what mesh peers report about their own peers and their side of each link fresh
/// (the admin UI's graph beyond this node's links, and what this node has yet to
/// receive). Besides the report in the WebSocket upgrade (`X-Shoal-Mesh-Peers`), each
/// side of a mesh link sends a `shoal/meshPeers` request (no reply) when the link starts,
/// then whenever its pending send on that link changes (at most every `coalesce`), and at least every
/// `interval`; it records the other side's. A plain Couchbase peer drops the unknown profile.
///
/// Properties: `node` (the sender's ID); `seq` (its database's latest sequence);
/// `pending-seqs` and `pending-docs` (what it has not had acknowledged by us on this link:
/// `LinkState.pendingSend`; absent while that is not known). Body: its connected peers'
/// IDs, comma-separated.
enum MeshPeerReports {
    static let profile = "shoal/meshPeers"
    /// Changes within this long go out in one report.
    static let coalesce = Duration.milliseconds(50)

    /// Records the reports that come in over `connection` (register before its first frame);
    /// the returned signal moves on with every report received.
    @discardableResult
    static func receive(on connection: BLIPConnection, mesh: MeshManager) -> ChangeSignal {
        let heard = ChangeSignal()
        // Serial: reports are recorded in the order they were sent.
        connection.setHandler(for: profile, serial: true) { message in
            if let node = message["node"], !node.isEmpty, node.count <= 128 {
                mesh.peerReported(nodeID: node, header: message.bodyString)
                record(message, on: connection, mesh: mesh)
            }
            heard.notify()
            return BLIPMessage()
        }
        return heard
    }

    /// Hands the peer's side of the link (its latest sequence and pending send) to the
    /// link's progress, where it becomes this node's pending receive.
    static func record(_ message: BLIPMessage, on connection: BLIPConnection, mesh: MeshManager) {
        guard let progress = mesh.linkProgress(carrying: connection) else { return }
        var pending: LinkBacklog?
        if let sequences = message["pending-seqs"].flatMap(Int.init), let documents = message["pending-docs"].flatMap(Int.init),
           sequences >= 0, documents >= 0 {
            pending = LinkBacklog(sequences: sequences, documents: documents)
        }
        progress.recordPeerReport(lastSequence: message["seq"].flatMap(UInt64.init), pendingSend: pending, on: connection)
    }

    /// Sends this node's report until the connection closes or the task is cancelled.
    ///
    /// With `heard` (the accepting side: what `receive` returned), the first report waits
    /// for the dialer's first one, at most `interval`. A dialer registers its handler in
    /// its session, which runs beside the reader: a report sent the moment the link was
    /// accepted arrived before it and was dropped ("no handler for profile
    /// shoal/meshPeers"), and the dialer knew nothing of its pending receive until the
    /// next report. The dialer reports right after registering, so its report is the
    /// sign that ours will be read.
    static func send(
        on connection: BLIPConnection, mesh: MeshManager, nodeID: String, interval: Duration, heard: ChangeSignal? = nil
    ) async {
        if let heard, heard.generation == 0 { await heard.wait(after: 0, timeout: interval) }
        var progress: ReplicationProgress?
        var last: (peers: String, pending: LinkBacklog?)?
        var sentAt = ContinuousClock.now
        // The first report goes at once (an acceptor's once the dialer spoke): until it
        // arrives the peer's pending receive is unknown (null) and the link is not in
        // step. (An acceptor's report that reached
        // the dialer with the 101 used to be dropped by the dialer's HTTP decoder, which
        // then failed the next frame's checksum; `BLIPWebSocketChannel` forwards those
        // bytes now, `EagerServerTests`.)
        while !Task.isCancelled && !connection.isClosed {
            // The link's progress, once a session of it runs on this connection.
            if progress == nil { progress = mesh.linkProgress(carrying: connection) }
            let generation = progress?.sendSignal.generation
            var pending: LinkBacklog?
            if let state = await progress?.linkState(reportMaxAge: mesh.configuration.reportMaxAge), state.sendKnown {
                pending = state.pendingSend
            }
            let peers = mesh.peersHeaderValue
            if last == nil || last!.peers != peers || last!.pending != pending || ContinuousClock.now - sentAt >= interval {
                var properties = [("node", nodeID), ("seq", String(mesh.lastSequence))]
                if let pending {
                    properties += [("pending-seqs", String(pending.sequences)), ("pending-docs", String(pending.documents))]
                }
                let report = BLIPMessage(profile: profile, properties: properties, body: Array(peers.utf8), noReply: true)
                do {
                    try await connection.sendNoReply(report)
                } catch {
                    return
                }
                last = (peers, pending)
                sentAt = ContinuousClock.now
            }
            let remaining = interval - (ContinuousClock.now - sentAt)
            if let progress, let generation {
                await progress.sendSignal.wait(after: generation, timeout: max(remaining, .zero))
                try? await Task.sleep(for: coalesce)
            } else {
                try? await Task.sleep(for: min(max(remaining, .zero), .milliseconds(100)))
            }
        }
    }
}

/// The mesh's dialer: the WebSocket dialer, plus peer reports on every link it opens.
struct MeshReportingDialer: BLIPDialer {
    let inner: any BLIPDialer
    let nodeID: String
    let interval: Duration
    /// Attaches the faults of the peer reached to each link (nil: the nemesis is off).
    let nemesis: Nemesis?
    /// The mesh of the database a URL names.
    let mesh: @Sendable (String) -> MeshManager?

    func dial(
        url: String, username: String?, password: String?, heartbeat: Duration, pinnedCertificate: String?,
        session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        try await dial(
            url: url, username: username, password: password, heartbeat: heartbeat, pinnedCertificate: pinnedCertificate,
            subprotocols: nil, session: session)
    }

    func dial(
        url: String, username: String?, password: String?, heartbeat: Duration, pinnedCertificate: String?,
        subprotocols: [String]?, session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        let mesh = self.mesh(url)
        let (nodeID, interval, nemesis) = (self.nodeID, self.interval, self.nemesis)
        try await inner.dial(
            url: url, username: username, password: password, heartbeat: heartbeat, pinnedCertificate: pinnedCertificate,
            subprotocols: subprotocols
        ) { connection in
            nemesis?.attach(connection, dialedURL: url)
            guard let mesh else { return try await session(connection) }
            MeshPeerReports.receive(on: connection, mesh: mesh)
            let reporter = Task { await MeshPeerReports.send(on: connection, mesh: mesh, nodeID: nodeID, interval: interval) }
            defer { reporter.cancel() }
            try await session(connection)
        }
    }
}
