import Testing

@testable import Discovery

@Suite("Static peers")
struct DiscoveredPeerStaticTests {
    @Test func parsesAWebSocketURL() throws {
        let peer = try #require(DiscoveredPeer(staticURL: "ws://10.0.0.5:4990/orders"))
        #expect(peer == DiscoveredPeer(
            nodeID: "10.0.0.5:4990", host: "10.0.0.5", port: 4990, databases: ["orders"], protocolVersion: nil, source: .static
        ))
    }

    @Test func defaultsAndVariants() throws {
        let bare = try #require(DiscoveredPeer(staticURL: "ws://peer.example"))
        #expect(bare.port == DiscoveredPeer.defaultStaticPort)
        #expect(bare.databases.isEmpty)
        let v6 = try #require(DiscoveredPeer(staticURL: "wss://[fe80::1]:443/db/_blipsync", nodeID: "n9"))
        #expect(v6.host == "fe80::1")
        #expect(v6.port == 443)
        #expect(v6.databases == ["db"])
        #expect(v6.nodeID == "n9")
        let userInfo = try #require(DiscoveredPeer(staticURL: "HTTP://user:pw@host:1/x?y=1"))
        #expect(userInfo.host == "host")
        #expect(userInfo.port == 1)
        #expect(userInfo.databases == ["x"])
    }

    @Test(arguments: ["", "host:4984", "ftp://h/x", "ws://", "ws://:80/x", "ws://h:0/x", "ws://h:70000", "ws://h:abc", "ws://[::1/x", "ws://[::1]x"])
    func rejectsNonsense(url: String) {
        #expect(DiscoveredPeer(staticURL: url) == nil)
    }
}
