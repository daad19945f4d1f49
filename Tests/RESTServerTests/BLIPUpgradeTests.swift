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
    /// Lite 4 with version vectors `BLIP_3+CBMobile_4` (another document model: refused
    /// unless something we speak is offered too).
    @Test func subprotocolChoice() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let port = node.ports.publicPort
        for (offer, chosen) in [
            ("BLIP_3+CBMobile_3, BLIP_3+CBMobile_2", "BLIP_3+CBMobile_3"),
            ("BLIP_3+CBMobile_2, BLIP_3+CBMobile_3", "BLIP_3+CBMobile_3"),
            ("BLIP_3+CBMobile_2", "BLIP_3+CBMobile_2"),
            ("BLIP_3+CBMobile_4, BLIP_3+CBMobile_3", "BLIP_3+CBMobile_3"),
        ] {
            let answer = try await Self.upgrade(port: port, path: "/db/_blipsync", subprotocols: offer)
            #expect(answer.status == 101, "\(offer): \(answer)")
            #expect(answer.headers["sec-websocket-protocol"] == chosen, "\(offer)")
        }
        for offer in ["BLIP_3+CBMobile_4", "BLIP_3", "BLIP_2+CBMobile_2"] {
            let refused = try await Self.upgrade(port: port, path: "/db/_blipsync", subprotocols: offer)
            #expect(refused.status == 400, "\(offer): \(refused)")
            #expect(refused.json["reason"] == "This endpoint needs a WebSocket upgrade with subprotocol BLIP_3+CBMobile_3 or BLIP_3+CBMobile_2")
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

/// BLIP and WebSocket bytes built by hand from the BLIP spec (`Sources/BLIP/BLIP.md`).
enum RawBLIP {
    static func upgradeRequest(
        port: Int, path: String, headers: [String: String] = [:], subprotocols: String = "BLIP_3+CBMobile_3"
    ) -> String {
        var text = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            + "Sec-WebSocket-Protocol: \(subprotocols)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return text + "\r\n"
    }

    static func varint(_ value: Int) -> [UInt8] {
        var value = UInt64(value)
        var bytes: [UInt8] = []
        repeat {
            let low = UInt8(value & 0x7F)
            value >>= 7
            bytes.append(value == 0 ? low : low | 0x80)
        } while value != 0
        return bytes
    }

    /// The first (and only) frame of a request on a fresh connection: number, flags
    /// (MSG, nothing else), properties, empty body, then the CRC-32 of the data.
    static func requestFrame(number: Int, properties: [(String, String)]) -> [UInt8] {
        var properties: [UInt8] = properties.flatMap { Array($0.0.utf8) + [0] + Array($0.1.utf8) + [0] }
        properties = varint(properties.count) + properties
        let crc = crc32(properties)
        return varint(number) + [0x00] + properties + [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)]
    }

    /// A client's WebSocket binary message: FIN, opcode 2, masked.
    static func maskedBinary(_ payload: [UInt8]) -> [UInt8] {
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        var bytes: [UInt8] = [0x82]
        if payload.count < 126 {
            bytes.append(0x80 | UInt8(payload.count))
        } else {
            bytes += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        bytes += key
        bytes += payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
        return bytes
    }

    struct Reply: CustomStringConvertible {
        let number: Int
        let type: Int
        let properties: String
        let body: [UInt8]
        var description: String {
            "#\(number) type \(type) [\(properties.replacingOccurrences(of: "\0", with: "|"))] \(String(decoding: body, as: UTF8.self))"
        }
    }

    /// The first BLIP frame in the server's binary WebSocket messages (pings skipped).
    static func readReply(_ socket: RawSocket) throws -> Reply {
        while true {
            let header = try socket.read(count: 2)
            var length = Int(header[1] & 0x7F)
            if length == 126 {
                let extended = try socket.read(count: 2)
                length = Int(extended[0]) << 8 | Int(extended[1])
            } else if length == 127 {
                length = try socket.read(count: 8).reduce(0) { $0 << 8 | Int($1) }
            }
            let payload = try socket.read(count: length)
            guard header[0] & 0x0F == 2 else { continue }
            var index = 0
            func readVarint() -> Int {
                var value = 0
                var shift = 0
                while index < payload.count {
                    let byte = payload[index]
                    index += 1
                    value |= Int(byte & 0x7F) << shift
                    if byte & 0x80 == 0 { break }
                    shift += 7
                }
                return value
            }
            let number = readVarint()
            let flags = readVarint()
            let propertiesLength = readVarint()
            let end = min(index + propertiesLength, payload.count)
            let properties = String(decoding: payload[index..<end], as: UTF8.self)
            let body = Array(payload[end..<max(end, payload.count - 4)])
            return Reply(number: number, type: flags & 0x07, properties: properties, body: body)
        }
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
