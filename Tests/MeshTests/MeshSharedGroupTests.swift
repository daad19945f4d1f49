import Discovery
import DocumentModel
import Foundation
import Mesh
import ShoalNode
import Synchronization
import Testing
import TestSupport

/// Databases that share a mesh group share one discovery, whose events can be taken
/// once: each event reaches the mesh of every database of the group.
@Suite struct MeshSharedGroupTests {
    static func peer(_ node: TestNode, databases: [String]) -> DiscoveredPeer {
        DiscoveredPeer(
            nodeID: node.node.nodeID, host: "127.0.0.1", port: node.ports.publicPort, databases: databases, source: .mdns)
    }

    /// Both databases in the mesh group "shared" (one discovery for the two).
    static func sharedGroup(_ configuration: inout NodeConfiguration) {
        configuration.heartbeat = .milliseconds(500)
        for index in configuration.databases.indices { configuration.databases[index].meshGroup = "shared" }
    }

    /// Feeds `events` to the meshes of `databases` on `node`, as the node's discovery task does.
    static func deliver(_ events: [DiscoveryEvent], to node: TestNode, databases: [String]) -> Task<Void, Never> {
        let (stream, continuation) = AsyncStream.makeStream(of: DiscoveryEvent.self)
        for event in events { continuation.yield(event) }
        continuation.finish()
        let targets = databases.map { (mesh: MeshManager.WeakMesh(mesh: node.node.meshes[$0]!), database: $0) }
        return Task { await MeshManager.deliver(stream, to: targets) }
    }

    @Test func everyDatabaseOfTheGroupLearnsThePeer() async throws {
        let a = try await TestNode.start(databases: ["a", "b"], configure: Self.sharedGroup)
        let b = try await TestNode.start(databases: ["a", "b"], configure: Self.sharedGroup)
        defer { Task { await a.stop(); await b.stop() } }
        await Self.deliver([.added(Self.peer(b, databases: ["a", "b"]))], to: a, databases: ["a", "b"]).value
        await Self.deliver([.added(Self.peer(a, databases: ["a", "b"]))], to: b, databases: ["a", "b"]).value
        _ = try await a.request("PUT", "/a/doc-a", json: ["v": .int(1)])
        _ = try await b.request("PUT", "/b/doc-b", json: ["v": .int(2)])
        #expect(try await eventually { try await b.request("GET", "/a/doc-a").status == 200 })
        #expect(try await eventually { try await a.request("GET", "/b/doc-b").status == 200 })
    }

    @Test func aPeerServingOneDatabaseIsDroppedByTheOther() async throws {
        let node = try await TestNode.start(databases: ["a", "b"])
        defer { Task { await node.stop() } }
        let listed = DiscoveredPeer(nodeID: "peer-1", host: "127.0.0.1", port: 1, databases: ["a"], source: .mdns)
        let meshA = try #require(node.node.meshes["a"]), meshB = try #require(node.node.meshes["b"])
        let chosenA = Mutex<[Set<String>]>([]), chosenB = Mutex<[Set<String>]>([])
        meshA.onChosenPeersChange { chosen in chosenA.withLock { $0.append(chosen) } }
        meshB.onChosenPeersChange { chosen in chosenB.withLock { $0.append(chosen) } }
        #expect(await eventually { chosenA.withLock { !$0.isEmpty } && chosenB.withLock { !$0.isEmpty } })
        await Self.deliver([.browsed(nodeID: "peer-1"), .added(listed)], to: node, databases: ["a", "b"]).value
        #expect(await eventually { chosenA.withLock { $0.last } == ["peer-1"] })
        // Mesh b saw the peer listed (and picked it), then learned it does not serve b: dropped.
        #expect(await eventually { chosenB.withLock { $0.contains(["peer-1"]) && $0.last == [] } })
    }

    @Test func resolutionOnDemandAsksForTheUnionOfTheMeshesPicks() {
        let asked = Mutex<[Set<String>]>([])
        let reporters = MeshManager.unionReporters(count: 2) { wanted in asked.withLock { $0.append(wanted) } }
        reporters[0](["p1", "p2"])
        reporters[1](["p2", "p3"])
        reporters[0](["p4"])
        reporters[1]([])
        #expect(asked.withLock { $0 } == [["p1", "p2"], ["p1", "p2", "p3"], ["p2", "p3", "p4"], ["p4"]])
    }
}
