import Testing

@testable import BLIP

/// The protocol version named by a WebSocket subprotocol: ordered, round-tripping its name,
/// and negotiated as the newest both sides speak.
@Suite struct ProtocolVersionTests {
    @Test func versionsAreOrderedAndNamed() {
        #expect(ProtocolVersion.cbMobile2 < .cbMobile3 && ProtocolVersion.cbMobile3 < .cbMobile4)
        #expect(ProtocolVersion.accepted == [.cbMobile4, .cbMobile3, .cbMobile2])
        for version in ProtocolVersion.allCases {
            #expect(ProtocolVersion(subprotocol: version.subprotocol) == version)
        }
        #expect(ProtocolVersion.cbMobile4.subprotocol == "BLIP_3+CBMobile_4")
        #expect(ProtocolVersion(subprotocol: "BLIP_3+CBMobile_5") == nil)
        #expect(ProtocolVersion(subprotocol: "blip_3+cbmobile_3") == nil)
        #expect(ProtocolVersion.cbMobile4.offers == [.cbMobile4, .cbMobile3, .cbMobile2])
        #expect(ProtocolVersion.cbMobile3.offers == [.cbMobile3, .cbMobile2])
        #expect(BLIPWebSocket.acceptedSubprotocols == ["BLIP_3+CBMobile_4", "BLIP_3+CBMobile_3", "BLIP_3+CBMobile_2"])
        #expect(BLIPWebSocket.subprotocol == "BLIP_3+CBMobile_3")
    }

    @Test func negotiationPicksTheNewestBothSpeak() {
        #expect(BLIPWebSocket.negotiate("BLIP_3+CBMobile_2, BLIP_3+CBMobile_4") == "BLIP_3+CBMobile_4")
        #expect(BLIPWebSocket.negotiate("BLIP_3+CBMobile_3") == "BLIP_3+CBMobile_3")
        #expect(BLIPWebSocket.negotiate("BLIP_3+CBMobile_9") == nil)
        #expect(BLIPWebSocket.negotiate(nil) == nil)
    }
}
