import DocumentModel
import Foundation
import Testing
import TestSupport

/// The `/{db}/_blipsync` upgrade as a real client drives it, byte by byte over a raw
/// socket: refused upgrades carry the status, challenge and JSON error a Couchbase Lite
/// client acts on, and a passive peer answers requests that arrive in the same TCP
/// segment as the end of the upgrade request.
@Suite struct BLIPUpgradeTests {
    /// A database without GUEST, with one enabled and one disabled user.
    static func securedNode() async throws -> TestNode {
        try await TestNode.start { configuration in
            configuration.passwordIterations = 1000
            configuration.databases[0].users = [
                "user1": ["password": "pass"],
                "gone": ["password": "pass", "disabled": true],
            ]
        }
    }

    /// Sends an upgrade request for `path` (plus `extra` bytes in the same write) and
    /// returns the status, headers and body of the answer.
    static func upgrade(
        port: Int, path: String, headers: [String: String] = [:], subprotocols: String = "BLIP_3+CBMobile_3"
    ) async throws -> HTTPResult {
        try await offThePool {
            let socket = try RawSocket(port: port)
            try socket.write(Array(RawBLIP.upgradeRequest(port: port, path: path, headers: headers, subprotocols: subprotocols).utf8))
            let head = try socket.readHead()
            var body: [UInt8] = []
            if head.status != 101 { body = try socket.readToEnd() }
            return HTTPResult(status: head.status, headers: head.headers, body: body)
        }
    }

    @Test func refusedUpgradesSayWhy() async throws {
        let node = try await Self.securedNode()
        defer { Task { await node.stop() } }
        let port = node.ports.publicPort
        let challenge = "Basic realm=\"Couchbase Sync Gateway\""

        // No credentials, no GUEST: 401 with Sync Gateway's challenge (LiteCore 2.8
        // sends its credentials only after it).
        let anonymous = try await Self.upgrade(port: port, path: "/db/_blipsync")
        #expect(anonymous.status == 401, "\(anonymous)")
        #expect(anonymous.headers["www-authenticate"] == challenge)
        #expect(anonymous.headers["content-type"] == "application/json")
        #expect(anonymous.json == ["error": "Unauthorized", "reason": "Login required"])

        // A wrong password, an unknown user: 401 `Invalid login`.
        for (user, password) in [("user1", "wrong"), ("nobody", "pass")] {
            let refused = try await Self.upgrade(port: port, path: "/db/_blipsync", headers: TestNode.basic(user, password))
            #expect(refused.status == 401, "\(refused)")
            #expect(refused.headers["www-authenticate"] == challenge)
            #expect(refused.json == ["error": "Unauthorized", "reason": "Invalid login"])
        }

        // A disabled user with the right password: 403, no challenge.
        let disabled = try await Self.upgrade(port: port, path: "/db/_blipsync", headers: TestNode.basic("gone", "pass"))
        #expect(disabled.status == 403, "\(disabled)")
        #expect(disabled.headers["www-authenticate"] == nil)
        #expect(disabled.json == ["error": "forbidden", "reason": "User is disabled"])

        // An unknown database: 404.
        let missing = try await Self.upgrade(port: port, path: "/nodb/_blipsync", headers: TestNode.basic("user1", "pass"))
        #expect(missing.status == 404, "\(missing)")
        #expect(missing.json["error"] == "not_found")

        // The right credentials: 101 with the BLIP subprotocol.
        let accepted = try await Self.upgrade(port: port, path: "/db/_blipsync", headers: TestNode.basic("user1", "pass"))
        #expect(accepted.status == 101, "\(accepted)")
        #expect(accepted.headers["sec-websocket-protocol"] == "BLIP_3+CBMobile_3")

        // The REST API's 401 carries the same challenge.
        #expect(try await node.request("GET", "/db/").headers["www-authenticate"] == challenge)
    }

    /// The subprotocol as Sync Gateway 3 chooses it: Couchbase Lite 3.x offers
    /// `BLIP_3+CBMobile_3` (and `_2`), LiteCore 2.8 only `BLIP_3+CBMobile_2`, Couchbase
    /// Lite 4 with version vectors `BLIP_3+CBMobile_4`: the highest offered is chosen.
    @Test func subprotocolChoice() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let port = node.ports.publicPort
        for (offer, chosen) in [
            ("BLIP_3+CBMobile_3, BLIP_3+CBMobile_2", "BLIP_3+CBMobile_3"),
            ("BLIP_3+CBMobile_2, BLIP_3+CBMobile_3", "BLIP_3+CBMobile_3"),
            ("BLIP_3+CBMobile_2", "BLIP_3+CBMobile_2"),
            ("BLIP_3+CBMobile_4, BLIP_3+CBMobile_3", "BLIP_3+CBMobile_4"),
            ("BLIP_3+CBMobile_4", "BLIP_3+CBMobile_4"),
        ] {
            let answer = try await Self.upgrade(port: port, path: "/db/_blipsync", subprotocols: offer)
            #expect(answer.status == 101, "\(offer): \(answer)")
            #expect(answer.headers["sec-websocket-protocol"] == chosen, "\(offer)")
        }
        for offer in ["BLIP_3+CBMobile_5", "BLIP_3", "BLIP_2+CBMobile_2"] {
            let refused = try await Self.upgrade(port: port, path: "/db/_blipsync", subprotocols: offer)
            #expect(refused.status == 400, "\(offer): \(refused)")
            #expect(refused.json["reason"] == """
                This endpoint needs a WebSocket upgrade with subprotocol BLIP_3+CBMobile_4 or BLIP_3+CBMobile_3 or BLIP_3+CBMobile_2
                """)
        }
    }

    /// Couchbase Lite's replicator sends `getCheckpoint` as soon as the socket opens,
    /// sometimes in the same segment as the end of its upgrade request: the passive
    /// peer's handlers must exist before the first frame is read. Every one of these
    /// connections writes the upgrade request and a masked `getCheckpoint` frame in one
    /// `write()`, and must get the checkpoint back.
    @Test func requestsInTheUpgradeSegmentAreAnswered() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let saved = try await node.request("PUT", "/db/_local/checkpoint/raw-client", json: ["remote": 42], admin: true)
        #expect(saved.status == 201, "\(saved)")
        let port = node.ports.publicPort
        let request = Array(RawBLIP.upgradeRequest(port: port, path: "/db/_blipsync").utf8)
        let frame = RawBLIP.maskedBinary(RawBLIP.requestFrame(number: 1, properties: [("Profile", "getCheckpoint"), ("client", "raw-client")]))

        let failures = try await offThePool {
            var failures: [String] = []
            for attempt in 0..<200 {
                let socket = try RawSocket(port: port)
                try socket.write(request + frame)
                let head = try socket.readHead()
                guard head.status == 101 else {
                    failures.append("#\(attempt): HTTP \(head.status)")
                    continue
                }
                let reply = try RawBLIP.readReply(socket)
                if reply.number != 1 || reply.type != 1 || reply.body != Array(#"{"remote":42}"#.utf8) {
                    failures.append("#\(attempt): \(reply)")
                }
            }
            return failures
        }
        #expect(failures.isEmpty, "\(failures.count) of 200 connections failed: \(failures.prefix(5))")
    }
}
