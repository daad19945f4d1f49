import AccessControl
import BLIP
import Mesh
import Synchronization

/// The mesh's part of one link this node dials (ARCHITECTURE.md §6): the proof of the
/// mesh secret, made once the TLS handshake has shown the peer's certificate and bound
/// to its digest, and the check that the accepting node answered with its own proof.
/// Without a secret the link is not authenticated (development meshes). The node ID
/// the acceptor answers with (proven, with a secret) goes to `onAcceptor`: it is how
/// static peers are identified, over TLS as well as plain links.
final class MeshLinkHook: BLIPUpgradeHook {
    let secret: MeshSecret?
    let nodeID: String
    let database: String
    /// Called with the acceptor's node ID and the peers it reported (`X-Shoal-Mesh-Peers`).
    let onAcceptor: @Sendable (String, String?) -> Void
    /// This node's connected peers, reported to the acceptor.
    let neighbors: @Sendable () -> String
    /// Why a link to the acceptor is refused now (the nemesis's partition), or nil.
    let refuse: @Sendable (String) -> String?
    private let sent = Mutex<String?>(nil)

    init(
        secret: MeshSecret?, nodeID: String, database: String, neighbors: @escaping @Sendable () -> String = { "" },
        refuse: @escaping @Sendable (String) -> String? = { _ in nil },
        onAcceptor: @escaping @Sendable (String, String?) -> Void = { _, _ in }
    ) {
        self.secret = secret
        self.nodeID = nodeID
        self.database = database
        self.neighbors = neighbors
        self.refuse = refuse
        self.onAcceptor = onAcceptor
    }

    func requestHeaders(peerCertificateDigest: [UInt8]?) -> [(String, String)] {
        let report = (MeshManager.peersHeader, neighbors())
        guard let secret else { return [report] }
        let proof = secret.dialProof(nodeID: nodeID, database: database, binding: peerCertificateDigest)
        sent.withLock { $0 = proof }
        return [(MeshSecret.header, proof), report]
    }

    func checkResponse(headers: [(String, String)], peerCertificateDigest: [UInt8]?) throws {
        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
        if let acceptor = header("X-Shoal-Node-ID"), let reason = refuse(acceptor) {
            throw BLIPError(code: 503, message: reason)
        }
        guard let secret else {
            if let acceptor = header("X-Shoal-Node-ID"), !acceptor.isEmpty { onAcceptor(acceptor, header(MeshManager.peersHeader)) }
            return
        }
        guard let proof = sent.withLock({ $0 }), let acceptor = header("X-Shoal-Node-ID"),
              secret.verifyAccept(
                header(MeshSecret.header), dialProof: proof, nodeID: acceptor, database: database,
                binding: peerCertificateDigest)
        else {
            throw BLIPError(code: 401, message: "the peer did not prove the mesh secret of \(database)")
        }
        onAcceptor(acceptor, header(MeshManager.peersHeader))
    }
}
