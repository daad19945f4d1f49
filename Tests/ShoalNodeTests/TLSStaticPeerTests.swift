import DocumentModel
import Foundation
import Mesh
@testable import ShoalNode
import Testing
import TestSupport

/// Static peers behind HTTPS-only ports (`SSLCert` with a certificate no system trusts):
/// their node IDs cannot be read from `GET /`, so they are learned from the proven
/// answer to the mesh upgrade, and two nodes that list each other keep one link.
@Suite struct TLSStaticPeerTests {
    static func node() async throws -> TestNode {
        let directory = TemporaryDirectory(prefix: "shoal-static-tls")
        let paths = try NodeCertificate.loadOrCreate(dataDirectory: directory.path, nodeID: UUID().uuidString)
        return try await TestNode.start(directory: directory) { configuration in
            configuration.heartbeat = .milliseconds(500)
            configuration.sslCertificatePath = paths.certificate
            configuration.sslKeyPath = paths.key
            configuration.databases[0].meshSecret = "correct horse battery"
        }
    }

    @Test func mutualStaticPeersOverHTTPSOnlyPortsKeepOneLink() async throws {
        let a = try await Self.node()
        let b = try await Self.node()
        defer { Task { for node in [a, b] { await node.stop() } } }
        let meshA = try #require(a.node.meshes["db"])
        let meshB = try #require(b.node.meshes["db"])
        async let addB: Void = meshA.addStaticPeer("ws://127.0.0.1:\(b.ports.publicPort)/db")
        async let addA: Void = meshB.addStaticPeer("ws://127.0.0.1:\(a.ports.publicPort)/db")
        _ = await (addA, addB)
        let dialerMesh = DialRule.shouldDial(local: a.node.nodeID, remote: b.node.nodeID) ? meshA : meshB
        func settled() -> Bool {
            let all = meshA.peers + meshB.peers
            return all.filter { $0.dialing && $0.connectedSince != nil }.count == 1 && all.filter { !$0.dialing }.count == 1
                && dialerMesh.peers.contains { $0.dialing && $0.connectedSince != nil }
        }
        let single = await eventually(timeout: .seconds(30)) { settled() }
        #expect(single, "\(meshA.peers) \(meshB.peers)")
        // Both learned the other's ID (the dial that stood down, too).
        #expect(meshA.peers.contains { $0.nodeID == b.node.nodeID })
        #expect(meshB.peers.contains { $0.nodeID == a.node.nodeID })
        _ = try await a.request("PUT", "/db/fromA", json: ["x": 1], admin: true)
        #expect(try await eventually { try await b.request("GET", "/db/fromA", admin: true).status == 200 })
    }
}
