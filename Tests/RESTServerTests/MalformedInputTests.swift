import DocumentModel
import Foundation
import Testing
import TestSupport

/// Garbage from the network gets a clean error or a closed connection; the node
/// keeps serving and nothing is written.
@Suite struct MalformedInputTests {
    @Test func garbageRequestsNeverTakeTheNodeDown() async throws {
        try await withNode { (node: TestNode) async throws in
            let garbage: [[UInt8]] = [
                Array("NOT HTTP AT ALL\r\n\r\n".utf8),
                Array("GET /db/ HTTP/1.1\r\nContent-Length: -5\r\n\r\n".utf8),
                Array("PUT /db/x HTTP/1.1\r\nContent-Length: 10\r\n\r\n{\"a\"".utf8),
                Array("GET /\u{1}\u{2} HTTP/1.1\r\n\r\n".utf8),
                [0xff, 0xfe, 0x00, 0x13, 0x37] + [UInt8](repeating: 0x41, count: 5000),
                Array("POST /db/_bulk_docs HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8),
            ]
            for bytes in garbage {
                _ = try? await HTTPTestClient.sendRaw(port: node.ports.publicPort, bytes: bytes, timeout: 5)
            }
            #expect(try await node.request("GET", "/").status == 200)
            #expect(try await node.request("GET", "/db/").json["update_seq"] == 0)
        }
    }

    @Test func randomJSONBodiesGetAnswers() async throws {
        try await withNode { node in
            var generator = SplitMix64(seed: 42)
            let valid = Array(#"{"docs":[{"_id":"a","x":[1,2,{"y":"z"}]}],"new_edits":true}"#.utf8)
            for round in 0..<60 {
                var bytes = valid
                for _ in 0..<(1 + Int(generator.next() % 4)) {
                    let index = Int(generator.next() % UInt64(bytes.count))
                    bytes[index] = UInt8(truncatingIfNeeded: generator.next())
                }
                let path = ["/db/_bulk_docs", "/db/doc\(round)", "/db/_revs_diff", "/db/_bulk_get", "/db/_all_docs"][round % 5]
                let method = path.hasPrefix("/db/doc") ? "PUT" : "POST"
                let response = try await node.request(method, path, raw: bytes, headers: ["Content-Type": "application/json"])
                #expect(response.status < 500, "\(path): \(response)")
            }
            #expect(try await node.request("GET", "/").status == 200)
        }
    }
}
