import BLIP
import DocumentModel
import Foundation
import Testing
import TestSupport

/// The admin UI's files and event stream (admin port only), and the `/_mesh` fields its
/// graph draws: node details, each link's state, last heard, lag and counters, and
/// the peers of peers.
@Suite struct AdminUIEndpointTests {
    @Test func thePageAndItsModulesAreServedOnTheAdminPortOnly() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        for path in ["/_admin/", "/_admin", "/_admin/db/db/sync", "/_admin/mesh"] {
            let page = try await node.request("GET", path, admin: true)
            #expect(page.status == 200 && page.headers["content-type"]?.hasPrefix("text/html") == true, "\(path): \(page.status)")
            #expect(page.text.contains("/_admin/assets/app.js"))
        }
        let module = try await node.request("GET", "/_admin/assets/app.js", admin: true)
        #expect(module.headers["content-type"]?.hasPrefix("text/javascript") == true && module.text.contains("import"))
        let css = try await node.request("GET", "/_admin/assets/admin.css", admin: true)
        #expect(css.headers["content-type"]?.hasPrefix("text/css") == true)
        try await node.request("GET", "/_admin/assets/nope.js", admin: true).expectError(404, "not_found")
        try await node.request("GET", "/_admin/", admin: false).expectError(404, "not_found")
        try await node.request("POST", "/_admin/", admin: true).expectStatus(405)
        try await node.request("GET", "/_admin/events?interval=5", admin: true).expectError(400, "bad_request")

        let events = try await offThePool { () throws -> String in
            let socket = try RawSocket(port: node.ports.adminPort, timeout: 10)
            try socket.write(Array("GET /_admin/events?interval=200 HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
            let head = try socket.readHead()
            guard head.status == 200, head.headers["content-type"] == "text/event-stream" else { return "\(head)" }
            var text = ""
            while !text.contains("event: metrics"), let chunk = try socket.readChunk() { text += String(decoding: chunk, as: UTF8.self) }
            return text
        }
        #expect(events.contains("event: hello\ndata: {"), "\(events)")
        #expect(events.contains("event: history\ndata: ["), "\(events)")
        #expect(events.contains("event: status\ndata: {"), "\(events)")
        #expect(events.contains("data: # TYPE"), "\(events)")
    }

    /// A node with the admin UI open (its event stream and a live changes feed) still
    /// stops: the streams end on the graceful shutdown instead of holding it.
    @Test func aNodeStopsWhileTheUIsStreamsAreOpen() async throws {
        let node = try await TestNode.start()
        var sockets: [RawSocket] = []
        for path in ["/_admin/events", "/db/_changes?feed=eventsource&heartbeat=30000", "/db/_changes?feed=continuous&heartbeat=30000"] {
            let socket = try await offThePool { try RawSocket(port: node.ports.adminPort, timeout: 10) }
            try socket.write(Array("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
            let head = try await offThePool { try socket.readHead() }
            #expect(head.status == 200, "\(path): \(head)")
            sockets.append(socket)
        }
        let stopped = AtomicFlag()
        let stopping = Task {
            await node.stop()
            stopped.value = true
        }
        // Held, it would wait for the 30 s heartbeats at least; see LiveQueryTests.
        #expect(await eventually(timeout: .seconds(20)) { stopped.value }, "the node did not stop with its streams open")
        if !stopped.value { stopping.cancel() }
        _ = sockets
    }

    @Test func meshShowsNodeDetailsLinksAndPeersOfPeers() async throws {
        func start(_ peers: [TestNode]) async throws -> TestNode {
            try await TestNode.start { configuration in
                configuration.heartbeat = .milliseconds(500)
                configuration.peers = peers.map { "ws://127.0.0.1:\($0.ports.publicPort)/db" }
            }
        }
        let b = try await start([])
        let a = try await start([b])
        defer { Task { await a.stop() } }
        try await a.request("PUT", "/db/doc", json: ["n": 1], admin: true).expectStatus(201)
        let aID = try #require(try await a.request("GET", "/_mesh", admin: true).json["node_id"]?.stringValue)
        let bID = try #require(try await b.request("GET", "/_mesh", admin: true).json["node_id"]?.stringValue)
        #expect(try await eventually {
            let peer = try await a.request("GET", "/_mesh", admin: true).json["meshes"]?[0]?["peers"]?[0]
            return peer?["state"] == "idle" && peer?["sequences_behind"] == 0
        })
        let mesh = try await a.request("GET", "/_mesh", admin: true).json
        let node = try #require(mesh["node"])
        #expect(node["version"]?.stringValue?.isEmpty == false && node["databases"] == ["db"])
        #expect(node["addresses"]?["admin"]?.stringValue == "127.0.0.1:\(a.ports.adminPort)", "\(node)")
        #expect((node["rss_bytes"]?.intValue ?? 0) > 1_000_000 && node["uptime_seconds"]?.intValue != nil, "\(node)")
        let peer = try #require(mesh["meshes"]?[0]?["peers"]?[0])
        #expect(peer["node_id"] == .string(bID) && peer["role"] == "dial", "\(peer)")
        #expect(peer["last_heard_seconds_ago"]?.doubleValue == 0 && peer["docs_pushed"] == 1, "\(peer)")

        // D links to B after A did: B's next report tells A about D (and B hears of A's peers).
        let d = try await start([b])
        defer { Task { await d.stop() } }
        let dID = try #require(try await d.request("GET", "/_mesh", admin: true).json["node_id"]?.stringValue)
        #expect(try await eventually(timeout: .seconds(10)) {
            let reported = try await a.request("GET", "/_mesh", admin: true).json["meshes"]?[0]?["peers_of_peers"]?[bID]
            return reported?.arrayValue?.contains(.string(dID)) == true
        })
        #expect(try await eventually(timeout: .seconds(10)) {
            try await b.request("GET", "/_mesh", admin: true).json["meshes"]?[0]?["peers_of_peers"]?[aID] == .array([.string(bID)])
        })

        // Stop B: A's link to it goes down and says when B was last heard.
        await b.stop()
        #expect(try await eventually(timeout: .seconds(15)) {
            let peer = try await a.request("GET", "/_mesh", admin: true).json["meshes"]?[0]?["peers"]?[0]
            return peer?["state"] == "reconnecting" && peer?["last_heard"] != nil
        })
    }
}
