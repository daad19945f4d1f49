import Foundation
import Testing

@testable import Mesh

/// When a mesh asks discovery to look again (``MeshManager/wantsRefresh(_:)``).
@Suite("Mesh: when to refresh discovery")
struct MeshRefreshRuleTests {
    static func peer(_ id: String, _ source: MeshPeer.Source, dialing: Bool, linked: Bool) -> MeshPeer {
        MeshPeer(
            nodeID: id, url: dialing ? "ws://10.0.0.1:4984/db" : nil, source: source, dialing: dialing,
            state: linked ? "idle" : "offline", connectedSince: linked ? Date() : nil)
    }

    @Test func aNodeWithoutAnyLinkLooksAgain() {
        // Alone, or every peer it knew is gone: its browse may have rested before anyone else
        // was on the network.
        #expect(MeshManager.wantsRefresh([]))
        #expect(MeshManager.wantsRefresh([Self.peer("a", .static, dialing: true, linked: false)]))
    }

    @Test func anUnlinkedMDNSDialLooksAgain() {
        #expect(MeshManager.wantsRefresh([
            Self.peer("a", .mdns, dialing: true, linked: true),
            Self.peer("b", .mdns, dialing: true, linked: false),
        ]))
    }

    @Test func linkedMeshesDoNotAsk() {
        #expect(!MeshManager.wantsRefresh([
            Self.peer("a", .mdns, dialing: true, linked: true),
            Self.peer("b", .inbound, dialing: false, linked: true),
        ]))
        // An unlinked static dial is not discovery's business while other links exist.
        #expect(!MeshManager.wantsRefresh([
            Self.peer("a", .inbound, dialing: false, linked: true),
            Self.peer("s", .static, dialing: true, linked: false),
        ]))
    }
}
