import DocumentModel
import Foundation
import Glibc
import Testing
import TestSupport

/// Replications created through the admin API are kept in `replications.json`: a
/// `201` means the definition survives a restart, a `DELETE` that answered `200` stays
/// done, and a change that cannot be written is an error that changes nothing.
struct StoredReplicationsTests {
    @Test func createdAndDeletedReplicationsSurviveARestartAndAFailedWriteChangesNothing() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-stored-replications")
        defer { directory.remove() }
        // A remote that refuses: the replications retry, and stay defined.
        let (refusing, port) = try LoopbackListener.boundButNotListening()
        defer { close(refusing) }
        let definition: JSON = ["remote": .string("ws://127.0.0.1:\(port)/db"), "direction": "pull", "continuous": true]
        var node = try await TestNode.start(persistent: true, directory: directory)
        #expect(try await node.request("PUT", "/db/_replication/kept", json: definition, admin: true).status == 201)
        #expect(try await node.request("PUT", "/db/_replication/dropped", json: definition, admin: true).status == 201)
        #expect(try await node.request("DELETE", "/db/_replication/dropped", admin: true).status == 200)
        await node.stop(keepingData: true)

        node = try await TestNode.start(persistent: true, directory: directory)
        #expect(try await node.request("GET", "/db/_replication/kept", admin: true).status == 200)
        #expect(try await node.request("GET", "/db/_replication/dropped", admin: true).status == 404)

        // The file cannot be replaced (a directory where its temporary goes): both a new
        // replication and a removal are refused, naming the file, and nothing changes.
        let blocked = directory.path + "/replications.json.tmp"
        try FileManager.default.createDirectory(atPath: blocked + "/in-the-way", withIntermediateDirectories: true)
        let refused = try await node.request("PUT", "/db/_replication/new", json: definition, admin: true)
        #expect(refused.status == 500 && refused.json["error"] == "internal_error", "\(refused)")
        #expect(refused.json["reason"]?.stringValue?.contains("replications.json.tmp") == true, "\(refused)")
        #expect(try await node.request("GET", "/db/_replication/new", admin: true).status == 404)
        let notRemoved = try await node.request("DELETE", "/db/_replication/kept", admin: true)
        #expect(notRemoved.status == 500, "\(notRemoved)")
        #expect(try await node.request("GET", "/db/_replication/kept", admin: true).status == 200)
        await node.stop(keepingData: true)

        try FileManager.default.removeItem(atPath: blocked)
        node = try await TestNode.start(persistent: true, directory: directory)
        #expect(try await node.request("GET", "/db/_replication/kept", admin: true).status == 200)
        #expect(try await node.request("GET", "/db/_replication/new", admin: true).status == 404)
        await node.stop(keepingData: true)
    }
}
