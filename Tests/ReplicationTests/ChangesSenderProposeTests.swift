import BLIP
import DocumentModel
import Testing
@testable import Replication

/// How a `proposeChanges` reply is read (`ChangesSender+Propose.swift`): as Sync Gateway 4
/// and couchbase-lite-core write it (`RevFinder::findProposedRevs`).
@Suite struct ChangesSenderProposeTests {
    @Test func repliesAreReadAsSyncGatewayWritesThem() {
        let reply = BLIPMessage(body: Array(#"[0,304,{"status":409,"rev":"18a1b2c3d4e50000@src"},409,403]"#.utf8))
        let statuses = ChangesSender.proposalStatuses(reply, count: 7)
        #expect(statuses == [
            .send, .have, .conflict("18a1b2c3d4e50000@src"), .conflict(nil), .refused(403),
            .send, .send,  // trailing zeros left out
        ])
        #expect(ChangesSender.proposalStatuses(BLIPMessage(), count: 2) == [.send, .send])
    }

    @Test func theRequestAsksForTheConflictingVersion() {
        let request = ChangesSender.proposeChangesRequest(body: Array("[]".utf8))
        #expect(request.profile == "proposeChanges")
        #expect(request["conflictIncludesRev"] == "true")
    }
}
