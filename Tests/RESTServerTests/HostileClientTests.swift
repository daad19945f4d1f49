import DocumentModel
import Foundation
import Testing
import TestSupport

/// Bad input from clients gets a clear error or a closed connection, loses nothing,
/// and the node keeps serving others: oversized and endless WebSocket frames on a
/// BLIP connection, deeply nested JSON, huge `_revisions` histories, attachment
/// lengths and digests that lie.
@Suite struct HostileClientTests {
    /// Sends `bytes` after a BLIP upgrade and returns how long the node took to close.
    static func afterUpgrade(port: Int, send bytes: [UInt8]) async throws -> (status: Int, closedAfter: Double) {
        try await offThePool {
            let socket = try RawSocket(port: port, timeout: 8)
            try socket.write(Array(RawBLIP.upgradeRequest(port: port, path: "/db/_blipsync").utf8))
            let status = try socket.readHead().status
            let start = Date()
            try socket.write(bytes)
            _ = try socket.readToEnd()
            return (status, Date().timeIntervalSince(start))
        }
    }

    @Test func oversizedWebSocketFrameClosesTheConnection() async throws {
        try await withNode { node in
            // A masked binary frame that announces 2^40 bytes (64-bit length), then a few.
            var frame: [UInt8] = [0x82, 0x80 | 127]
            frame += (0..<8).map { UInt8(truncatingIfNeeded: (UInt64(1) << 40) >> (8 * (7 - $0))) }
            frame += [1, 2, 3, 4] + [UInt8](repeating: 0x55, count: 64)
            let (status, seconds) = try await Self.afterUpgrade(port: node.ports.publicPort, send: frame)
            #expect(status == 101)
            #expect(seconds < 5, "closed after \(seconds) s")
            #expect(try await node.request("GET", "/db/").status == 200)
        }
    }

    @Test func frameJustOverTheLimitClosesTheConnection() async throws {
        try await withNode { node in
            let payload = [UInt8](repeating: 0, count: (1 << 20) + 1)
            var frame: [UInt8] = [0x82, 0x80 | 127]
            frame += (0..<8).map { UInt8(truncatingIfNeeded: UInt64(payload.count) >> (8 * (7 - $0))) }
            frame += [0, 0, 0, 0] + payload
            let (_, seconds) = try await Self.afterUpgrade(port: node.ports.publicPort, send: frame)
            #expect(seconds < 5, "closed after \(seconds) s")
            #expect(try await node.request("GET", "/").status == 200)
        }
    }

    @Test func deeplyNestedDocuments() async throws {
        try await withNode { node in
            let deepest = Array(("{\"a\":" + String(repeating: "[", count: 511) + String(repeating: "]", count: 511) + "}").utf8)
            let stored = try await node.request("PUT", "/db/deep", raw: deepest, headers: ["Content-Type": "application/json"])
            #expect(stored.status == 201, "\(stored)")
            let read = try await node.request("GET", "/db/deep?revs=true")
            #expect(read.status == 200)
            #expect(read.json["a"] == (try JSON.parse(deepest))["a"])
            for depth in [512, 100_000] {
                let body = Array(("{\"a\":" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}").utf8)
                let refused = try await node.request("PUT", "/db/deeper", raw: body, headers: ["Content-Type": "application/json"])
                refused.expectError(400, "bad_request")
            }
        }
    }

    @Test func hugeRevisionHistoryIsStemmed() async throws {
        try await withNode { node in
            let count = 20_000
            let ids: [JSON] = (0..<count).map { .string(String(format: "%040x", count - $0)) }
            let body: JSON = [
                "_rev": .string("\(count)-" + String(format: "%040x", count)),
                "_revisions": ["start": .int(Int64(count)), "ids": .array(ids)], "n": 1,
            ]
            let stored = try await node.request("PUT", "/db/long?new_edits=false", json: body)
            #expect(stored.status == 201, "\(stored)")
            let read = try await node.request("GET", "/db/long?revs=true")
            let kept = read.json["_revisions"]?["ids"]?.arrayValue?.count ?? 0
            #expect(kept >= 1 && kept <= 1000, "history stemmed to revs_limit: \(kept)")
        }
    }

    @Test func attachmentLengthAndDigestLiesAreCorrected() async throws {
        try await withNode { node in
            let data = Data("hello world".utf8).base64EncodedString()
            let body: JSON = ["_attachments": ["a.txt": [
                "content_type": "text/plain", "data": .string(data), "length": 999_999, "digest": "sha1-AAAA",
            ]]]
            let stored = try await node.request("PUT", "/db/liar", json: body)
            #expect(stored.status == 201, "\(stored)")
            let read = try await node.request("GET", "/db/liar")
            let stub = read.json["_attachments"]?["a.txt"]
            #expect(stub?["length"]?.intValue == 11)
            #expect(stub?["digest"]?.stringValue == Digests.attachmentDigest(of: Array("hello world".utf8)))
            // A stub for content the node does not have is refused, not stored.
            let missing: JSON = ["_attachments": ["b": ["stub": true, "digest": "sha1-AAAAAAAAAAAAAAAAAAAAAAAAAAA=", "length": 5]]]
            let refused = try await node.request("PUT", "/db/ghost", json: missing)
            #expect(refused.status == 412, "\(refused)")
            #expect(try await node.request("GET", "/db/ghost").status == 404)
        }
    }
}
