import BLIP
import Testing

@testable import Replication

/// How a peer speaks, as one value: every difference a session makes is a named predicate
/// of the protocol version and of who the peer is.
@Suite struct PeerDialectTests {
    @Test func predicatesFollowTheVersionAndThePeer() {
        let meshLink = PeerDialect(version: .cbMobile3, peer: .shoal)
        #expect(!meshLink.namesByVersions && !meshLink.refusesBranches && !meshLink.offersWinnersOnly)
        #expect(meshLink.carriesShoalVectors && meshLink.exchangesCoverage && !meshLink.proposesOnPush)

        let liteThree = PeerDialect(subprotocol: "BLIP_3+CBMobile_3", peer: .client)
        #expect(liteThree.refusesBranches && liteThree.offersWinnersOnly)
        #expect(!liteThree.carriesShoalVectors && !liteThree.exchangesCoverage)

        let liteFour = PeerDialect(subprotocol: "BLIP_3+CBMobile_4", peer: .client)
        #expect(liteFour.namesByVersions && liteFour.offersWinnersOnly && liteFour.proposesOnPush)
        #expect(!liteFour.carriesShoalVectors && !liteFour.exchangesCoverage)

        // Shoal's replicator to a CBMobile_4 peer (Sync Gateway 4 or a Shoal node).
        let versions = PeerDialect(version: .cbMobile4, peer: .server)
        #expect(versions.namesByVersions && versions.offersWinnersOnly && !versions.refusesBranches)
        #expect(!versions.carriesShoalVectors && !versions.exchangesCoverage)

        // Another server on revision trees is offered every leaf, with Shoal's vectors
        // (which it reads past), and takes no part in the mesh's knowledge.
        let server = PeerDialect(version: .cbMobile3, peer: .server)
        #expect(!server.offersWinnersOnly && server.carriesShoalVectors && !server.exchangesCoverage)

        // An unknown or missing subprotocol is the default version.
        #expect(PeerDialect(subprotocol: nil, peer: .shoal).version == .cbMobile3)
        #expect(PeerDialect(subprotocol: "nonsense", peer: .shoal).version == .cbMobile3)
    }

    @Test func aReplicationsVersioningIsTheNewestVersionItsDialOffers() {
        #expect(ProtocolVersion(versioning: "rev-trees") == .cbMobile3)
        #expect(ProtocolVersion(versioning: "version-vectors") == .cbMobile4)
        #expect(ProtocolVersion(versioning: "vectors") == nil)
        #expect(ProtocolVersion.cbMobile4.subChangesVersioning == "version-vectors")
        #expect(ProtocolVersion.cbMobile2.subChangesVersioning == "rev-trees")
    }

    @Test func theSendersOptionsComeFromTheDialect() {
        let serving = ChangesSender.Options(dialect: PeerDialect(version: .cbMobile4, peer: .client))
        #expect(serving.versionVectors && serving.winnerOnly && !serving.proposes)
        let pushing = ChangesSender.Options(dialect: PeerDialect(version: .cbMobile4, peer: .server), pushing: true)
        #expect(pushing.proposes)
        let mesh = ChangesSender.Options(dialect: PeerDialect(), pushing: true)
        #expect(!mesh.versionVectors && !mesh.winnerOnly && !mesh.proposes)
    }
}
