import BLIP
import DocumentModel
import DocumentStore
@testable import Replication
import Testing

/// A CBMobile_4 `rev` whose history holds a version newer than its current one: what a
/// server shows for a winner over the branches it closed, when a closed branch is newer
/// (written later, or on a clock ahead). Taken from a server (Shoal's replicator pulling),
/// so a client on the closed branch moves to the winner; refused (400) from a client,
/// whose current version must be its newest.
@Suite struct VersionedRevCausalityTests {
    static let winner = "18eee10d5b711c47@e66euUFEj8Orqe/N/BW3Dg"
    static let closedBranch = "18eeee07a2cd0078@BjJVa/eiwdPXh6VmoQXFLQ"

    static func message() -> BLIPMessage {
        BLIPMessage(
            properties: [("Profile", "rev"), ("id", "hot-14"), ("rev", winner), ("history", closedBranch)],
            body: Array(#"{"side":"B3"}"#.utf8))
    }

    @Test func aServersWinnerOverNewerClosedBranchesIsTaken() throws {
        let update = try RevisionReceiver.parseRev(Self.message(), dialect: PeerDialect(version: .cbMobile4, peer: .server))
        let vector = try #require(update.version)
        #expect(vector.current.description == Self.winner)
        // It holds the closed branch's version: a client on that branch takes it as newer.
        let branch = VersionVector(try Version(parsing: Self.closedBranch))
        #expect(vector.compare(to: branch) == .newer)
    }

    @Test func aClientsVectorMustHaveItsNewestVersionCurrent() {
        do {
            _ = try RevisionReceiver.parseRev(Self.message(), dialect: PeerDialect(version: .cbMobile4, peer: .client))
            Issue.record("a client's non-causal vector was taken")
        } catch {
            #expect(error.code == 400)
            #expect(error.message.contains("invalid version vector"))
        }
    }
}
