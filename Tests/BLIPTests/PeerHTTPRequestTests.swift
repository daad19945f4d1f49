import BLIP
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `PeerHTTPRequest` against a real node's listeners, a server that never answers and
/// a closed port.
@Suite struct PeerHTTPRequestTests {
    @Test func getsAndPutsThroughANodesListeners() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        let root = try await PeerHTTPRequest(url: URL(string: "http://127.0.0.1:\(node.ports.publicPort)/")!).send()
        #expect(root.status == 200)
        let welcome = String(decoding: root.body, as: UTF8.self)
        #expect(welcome.contains("\"node_id\""))

        let put = PeerHTTPRequest(
            method: "PUT", url: URL(string: "http://127.0.0.1:\(node.ports.adminPort)/db/doc1")!,
            headers: [("Content-Type", "application/json")], body: Array(#"{"a":"é"}"#.utf8))
        let created = try await put.send()
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        let read = try await PeerHTTPRequest(url: URL(string: "http://127.0.0.1:\(node.ports.adminPort)/db/doc1")!).send()
        #expect(read.status == 200)
        #expect(String(decoding: read.body, as: UTF8.self).contains(#""a":"é""#))
        #expect(read.headers.contains { $0.0.lowercased() == "content-type" && $0.1.hasPrefix("application/json") })
    }

    /// A server that accepts the connection and never answers (a peer behind a one-way
    /// partition) fails the request at its timeout.
    @Test func aSilentServerTimesOut() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let error = await #expect(throws: BLIPError.self) {
            _ = try await PeerHTTPRequest(url: URL(string: "http://127.0.0.1:\(listener.port)/")!, timeout: .milliseconds(300)).send()
        }
        #expect(error?.code == 504, "\(String(describing: error))")
    }

    @Test func aClosedPortAndABadURLFail() async throws {
        let listener = try SilentListener()
        let port = listener.port
        listener.close()
        await #expect(throws: (any Error).self) {
            _ = try await PeerHTTPRequest(url: URL(string: "http://127.0.0.1:\(port)/")!, timeout: .seconds(2)).send()
        }
        await #expect(throws: BLIPError.self) {
            _ = try await PeerHTTPRequest(url: URL(string: "ftp://127.0.0.1/")!).send()
        }
    }
}

/// A loopback TCP socket that listens (the kernel completes connections) and never
/// reads or writes.
private final class SilentListener: @unchecked Sendable {
    let fd: Int32
    let port: Int

    init() throws {
        (fd, port) = try LoopbackListener.open(backlog: 8)
    }

    func close() {
        _ = Glibc.close(fd)
    }
}
