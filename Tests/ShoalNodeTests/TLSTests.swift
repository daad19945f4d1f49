import AccessControl
import BLIP
import DocumentModel
import Foundation
import HTTPTypes
import Replication
@testable import ShoalNode
import Testing
import TestSupport

/// TLS: Sync Gateway's `SSLCert`/`SSLKey` on the public port, `wss://` replication
/// (system roots or a pinned certificate), and mesh links over TLS with each node's
/// own certificate, authenticated by the mesh secret's proofs bound to it.
@Suite struct TLSTests {
    /// A node whose public port has `SSLCert`/`SSLKey`: a self-signed certificate made
    /// in its data directory (removed with the node).
    static func httpsNode() async throws -> (node: TestNode, certificate: NodeCertificate.Paths) {
        let directory = TemporaryDirectory(prefix: "shoal-https")
        let paths = try NodeCertificate.loadOrCreate(dataDirectory: directory.path, nodeID: "test-server")
        let node = try await TestNode.start(directory: directory) { configuration in
            configuration.sslCertificatePath = paths.certificate
            configuration.sslKeyPath = paths.key
        }
        return (node, paths)
    }

    static func ids(_ node: TestNode) async throws -> [String] {
        try await node.request("GET", "/db/_all_docs", admin: true).json["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
    }

    @Test func sslCertServesHTTPSAndRefusesPlainHTTP() async throws {
        let (node, paths) = try await Self.httpsNode()
        defer { Task { await node.stop() } }
        let der = try BLIPClientTLS.certificateDER(pemOrPath: paths.certificate)
        let url = "wss://127.0.0.1:\(node.ports.publicPort)/db/"
        let pinned = await BLIPWebSocket.probe(url: url, tls: .pinned(der))
        #expect(pinned?.status == 200)
        #expect(pinned?.body.contains("\"db_name\":\"db\"") == true, "\(String(describing: pinned))")
        #expect(await BLIPWebSocket.probe(url: url, tls: .standard) == nil,
                "a self-signed certificate fails the system roots")
        let plain = try await node.request("GET", "/db/")
        #expect(plain.status == 400)
        #expect(plain.text.contains("needs TLS"))
        #expect(try await node.request("GET", "/db/", admin: true).status == 200, "the admin port stays plain")
    }

    @Test func wssReplicationChecksTheServerCertificate() async throws {
        let (server, paths) = try await Self.httpsNode()
        let client = try await TestNode.start()
        defer { Task { for node in [server, client] { await node.stop() } } }
        for id in ["a", "b", "c"] {
            #expect(try await server.request("PUT", "/db/\(id)", json: ["n": .string(id)], admin: true).status == 201)
        }
        let remote = "wss://127.0.0.1:\(server.ports.publicPort)/db"
        #expect(try await client.request("PUT", "/db/_replication/pinned", json: [
            "remote": .string(remote), "direction": "pull", "pinned_cert": .string(paths.certificate),
        ], admin: true).status == 201)
        #expect(try await eventually {
            try await client.request("GET", "/db/_replicationStatus/pinned", admin: true).json["status"] == "stopped"
        })
        #expect(try await Self.ids(client) == ["a", "b", "c"])

        let untrusting = try await TestNode.start()
        defer { Task { await untrusting.stop() } }
        _ = try await untrusting.request("PUT", "/db/_replication/roots", json: [
            "remote": .string(remote), "direction": "pull",
        ], admin: true)
        #expect(try await eventually {
            let status = try await untrusting.request("GET", "/db/_replicationStatus/roots", admin: true).json
            return status["error_message"]?.stringValue?.contains("TLS") == true
        })
        #expect(try await Self.ids(untrusting).isEmpty)
    }

    /// A node with `mesh.secret` (TLS on by default) and static peers.
    static func meshNode(
        secret: String = "correct horse battery", tls: Bool? = nil, peers: [String] = [], directory: TemporaryDirectory? = nil
    ) async throws -> TestNode {
        try await TestNode.start(persistent: directory != nil, directory: directory) { configuration in
            configuration.heartbeat = .milliseconds(500)
            configuration.peers = peers
            configuration.databases[0].meshSecret = secret
            configuration.databases[0].meshTLSSetting = tls
        }
    }

    @Test func meshLinksUseTLSWithEachNodesOwnCertificate() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-mesh-tls")
        let hub = try await Self.meshNode(directory: directory)
        let certificatePath = NodeCertificate.paths(dataDirectory: directory.path).certificate
        let original = try #require(FileManager.default.contents(atPath: certificatePath))
        let keyMode = try FileManager.default.attributesOfItem(
            atPath: NodeCertificate.paths(dataDirectory: directory.path).key)[.posixPermissions] as? Int
        #expect(keyMode == 0o600)
        // The hub requires TLS for mesh links, so a member that gets in used it.
        let peer = "ws://127.0.0.1:\(hub.ports.publicPort)/db"
        let member = try await Self.meshNode(peers: [peer])
        let plain = try await Self.meshNode(tls: false, peers: [peer])
        defer { Task { for node in [member, plain] { await node.stop() } } }
        _ = try await member.request("PUT", "/db/from-member", json: ["x": 1], admin: true)
        _ = try await plain.request("PUT", "/db/from-plain", json: ["x": 2], admin: true)
        _ = try await hub.request("PUT", "/db/from-hub", json: ["x": 3], admin: true)
        #expect(try await eventually {
            let (a, b) = (try await Self.ids(member), try await Self.ids(hub))
            return a.contains("from-hub") && b.contains("from-member")
        })
        #expect(try await eventually {
            let peers = try await plain.request("GET", "/db/_peers", admin: true).json["peers"]?.arrayValue ?? []
            return peers.contains { $0["last_error"]?.stringValue?.contains("must use TLS") == true }
        })
        #expect(try await !Self.ids(hub).contains("from-plain"))
        // Plain REST still works on the same port.
        #expect(try await hub.request("GET", "/db/").status == 200)

        // The certificate is kept across restarts.
        let port = hub.ports.publicPort
        await hub.stop(keepingData: true)
        let restarted = try await TestNode.start(persistent: true, directory: directory) { configuration in
            configuration.publicAddress = ListenAddress(host: "127.0.0.1", port: port)
            configuration.databases[0].meshSecret = "correct horse battery"
        }
        #expect(FileManager.default.contents(atPath: certificatePath) == original)
        await restarted.stop()
    }

    /// Dials `node` as a mesh peer over `wss://`, with proofs made by `hook`.
    static func dial(_ node: TestNode, hook: any BLIPUpgradeHook) async throws {
        let dialer = WebSocketDialer(extraHeaders: [WebSocketDialer.nodeIDHeader: "intruder"]) { url in
            .init(url: url, tls: .boundByApplication, hook: hook)
        }
        try await dialer.dial(
            url: "wss://127.0.0.1:\(node.ports.publicPort)/db/_blipsync", username: nil, password: nil,
            heartbeat: .milliseconds(500)) { _ in }
    }

    /// A hook that binds its proof to a certificate other than the one the handshake
    /// showed: what a man in the middle forwards (the dialer bound its proof to the
    /// relay's certificate).
    struct RelayedProof: BLIPUpgradeHook {
        let secret: MeshSecret
        func requestHeaders(peerCertificateDigest: [UInt8]?) -> [(String, String)] {
            [(MeshSecret.header, secret.dialProof(nodeID: "intruder", database: "db", binding: Array(repeating: 1, count: 32)))]
        }
        func checkResponse(headers: [(String, String)], peerCertificateDigest: [UInt8]?) throws {}
    }

    @Test func proofsAreBoundToTheCertificateBothWays() async throws {
        let secret = MeshSecret("correct horse battery")
        let hub = try await Self.meshNode()
        defer { Task { await hub.stop() } }
        await #expect(throws: DialError.self) { try await Self.dial(hub, hook: RelayedProof(secret: secret)) }
        do {
            try await Self.dial(hub, hook: RelayedProof(secret: secret))
        } catch let error as DialError {
            #expect(error.description.contains("401"), "\(error)")
        }
        // The honest proof gets in, and the hub's answer checks out.
        try await Self.dial(hub, hook: MeshLinkHook(secret: secret, nodeID: "intruder", database: "db"))

        // A server that answers for another certificate (a relay) is refused by the dialer.
        let hook = MeshLinkHook(secret: secret, nodeID: "n1", database: "db")
        let seen: [UInt8] = Array(repeating: 2, count: 32)
        let sent = try #require(hook.requestHeaders(peerCertificateDigest: seen).first?.1)
        let forOther = secret.acceptProof(dialProof: sent, nodeID: "n2", database: "db", binding: Array(repeating: 3, count: 32))
        #expect(throws: BLIPError.self) {
            try hook.checkResponse(headers: [("X-Shoal-Node-ID", "n2"), (MeshSecret.header, forOther)], peerCertificateDigest: seen)
        }
        let honest = secret.acceptProof(dialProof: sent, nodeID: "n2", database: "db", binding: seen)
        try hook.checkResponse(headers: [("x-shoal-node-id", "n2"), (MeshSecret.header.lowercased(), honest)], peerCertificateDigest: seen)
        #expect(throws: BLIPError.self) { try hook.checkResponse(headers: [], peerCertificateDigest: seen) }
    }
}
