import BLIP
import Mesh
import Replication
import Synchronization

/// Keeps what mesh peers report about their own peers fresh (the admin UI's graph
/// beyond this node's links). Besides the report in the WebSocket upgrade
/// (`X-Shoal-Mesh-Peers`), each side of a mesh link sends, every `interval`, a
/// `shoal/meshPeers` request (no reply; property `node`: the sender's ID; body: its
/// connected peers' IDs, comma-separated), and records the other side's. A plain
/// Couchbase peer drops the unknown profile.
enum MeshPeerReports {
    static let profile = "shoal/meshPeers"

    /// Records the reports that come in over `connection` (register before its first frame).
    static func receive(on connection: BLIPConnection, mesh: MeshManager) {
        connection.setHandler(for: profile) { message in
            if let node = message["node"], !node.isEmpty, node.count <= 128 {
                mesh.peerReported(nodeID: node, header: message.bodyString)
            }
            return BLIPMessage()
        }
    }

    /// Sends this node's report every `interval` until the connection closes or the task
    /// is cancelled.
    static func send(on connection: BLIPConnection, mesh: MeshManager, nodeID: String, interval: Duration) async {
        while !Task.isCancelled && !connection.isClosed {
            try? await Task.sleep(for: interval)
            let report = BLIPMessage(profile: profile, properties: [("node", nodeID)], body: Array(mesh.peersHeaderValue.utf8), noReply: true)
            do {
                try await connection.sendNoReply(report)
            } catch {
                return
            }
        }
    }
}

/// The mesh's dialer: the WebSocket dialer, plus peer reports on every link it opens.
struct MeshReportingDialer: BLIPDialer {
    let inner: any BLIPDialer
    let nodeID: String
    let interval: Duration
    /// The mesh of the database a URL names.
    let mesh: @Sendable (String) -> MeshManager?

    func dial(
        url: String, username: String?, password: String?, heartbeat: Duration, pinnedCertificate: String?,
        session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        let mesh = self.mesh(url)
        let (nodeID, interval) = (self.nodeID, self.interval)
        try await inner.dial(
            url: url, username: username, password: password, heartbeat: heartbeat, pinnedCertificate: pinnedCertificate
        ) { connection in
            guard let mesh else { return try await session(connection) }
            MeshPeerReports.receive(on: connection, mesh: mesh)
            let reporter = Task { await MeshPeerReports.send(on: connection, mesh: mesh, nodeID: nodeID, interval: interval) }
            defer { reporter.cancel() }
            try await session(connection)
        }
    }
}
