import BLIP
import DocumentModel
import Foundation
import Replication
import Testing
import TestSupport

/// Requests as couchbase-lite-core's replicator sends them to a passive peer, built by
/// hand from its sources (`Puller::_start`, `Pusher::sendChanges`, `Replicator::getCollections`),
/// and the answers it acts on (Sources/Replication/Replication.md, "Couchbase Lite's
/// replicator, message by message").
@Suite struct PassivePeerMessageTests {
    /// Couchbase Lite 3.1+'s `subChanges`: `versioning` names its document model. A
    /// revision-tree puller is served; a version-vector one is refused, as Couchbase Lite's
    /// own passive Pusher refuses it.
    @Test func subChangesVersioning() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        #expect(try await node.request("PUT", "/db/doc", json: ["a": 1], admin: true).status == 201)
        try await ClientConflictTests.asClient(node) { connection in
            do {
                _ = try await connection.sendRequest(BLIPMessage(
                    profile: "subChanges", properties: [("versioning", "version-vectors"), ("batch", "200")]))
                Issue.record("a version-vector pull was served")
            } catch let error as BLIPError {
                #expect(error.domain == "HTTP" && error.code == 501, "\(error)")
                #expect(error.message == "Incompatible document versioning.")
            }
            let pulled = try await ClientConflictTests.pull(connection, properties: [
                ("since", "0"), ("batch", "200"), ("sendReplacementRevs", "true"), ("versioning", "rev-trees"),
                ("activeOnly", "true"), ("revocations", "true"),
            ])
            #expect(pulled.revs.map(\.id) == ["doc"])
            await connection.close()
        }
    }

    /// A request for a profile we do not serve — `getCollections`, which Couchbase Lite 3
    /// sends only to sync named collections — gets ERR BLIP/404 with Sync Gateway's
    /// message, which Couchbase Lite recognizes ("does not support named collections").
    @Test func unknownProfileIsAnsweredAsSyncGatewayDoes() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        try await ClientConflictTests.asClient(node) { connection in
            let body: JSON = ["checkpoint_ids": ["cp-abc"], "collections": ["_default.lists"]]
            do {
                _ = try await connection.sendRequest(BLIPMessage(profile: "getCollections", body: body.canonicalBytes()))
                Issue.record("getCollections was answered")
            } catch let error as BLIPError {
                #expect(error == BLIPError(code: 404, message: "No handler for BLIP request"))
            }
            await connection.close()
        }
    }
}
