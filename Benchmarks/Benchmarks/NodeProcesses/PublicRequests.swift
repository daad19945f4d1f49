// A user's request on the public port against the same request on the admin port, of
// the same node process in the same run (the baseline):
//
//   get-doc-admin         GET /db/{doc} on the admin port (no authentication).
//   get-doc-public-basic  the same on the public port with HTTP Basic as a user with an
//                         admin channel and a role: authentication and the user's access
//                         (kept until principals or grants change), then the read check.
//
// Each has its own node process.

import Benchmark
import BenchmarkSupport
import Foundation
import NIOCore
import NIOHTTP1

/// One node with a user, its role and a document the user can read.
final class PublicRequestNode: @unchecked Sendable {
    static let authorization = "Basic " + Data("reader:secret-pw".utf8).base64EncodedString()
    let node: NodeProcess
    let publicClient: KeepAliveHTTPClient

    init() async throws {
        node = try await NodeProcess.start("public")
        for (path, body) in [
            ("/db/_role/editors", #"{"admin_channels": ["drafts"]}"#),
            ("/db/_user/reader", #"{"password": "secret-pw", "admin_channels": ["news"], "admin_roles": ["editors"]}"#),
            ("/db/doc", #"{"channels": ["news"], "title": "hello", "n": 1}"#),
        ] {
            var buffer = ByteBuffer()
            buffer.writeString(body)
            let response = try await node.admin.request(.PUT, path, body: buffer)
            guard response.status == .created || response.status == .ok else {
                throw BenchmarkFailure("PUT \(path) answered \(response.status): \(response.bodyString)")
            }
        }
        publicClient = try await KeepAliveHTTPClient.connect(host: "127.0.0.1", port: node.publicPort)
        try await getPublic()
    }

    func getAdmin() async throws {
        let response = try await node.admin.request(.GET, "/db/doc")
        guard response.status == .ok else { throw BenchmarkFailure("admin GET answered \(response.status)") }
    }

    func getPublic() async throws {
        let response = try await publicClient.request(.GET, "/db/doc", headers: [("Authorization", Self.authorization)])
        guard response.status == .ok else { throw BenchmarkFailure("public GET answered \(response.status): \(response.bodyString)") }
    }

    func stop() async {
        await publicClient.close()
        await node.stop()
    }
}

func publicRequestBenchmarks() {
    for (name, isPublic) in [("get-doc-admin", false), ("get-doc-public-basic", true)] {
        let state = BenchmarkState<PublicRequestNode>(seed: 0)
        Benchmark(name, configuration: .init(
            metrics: [.wallClock], timeUnits: .microseconds, warmupIterations: 50,
            scalingFactor: .one, maxDuration: .seconds(20), maxIterations: 3_000
        )) { benchmark in
            benchmark.startMeasurement()
            if isPublic { try await state.current.getPublic() } else { try await state.current.getAdmin() }
            benchmark.stopMeasurement()
        } setup: {
            state.fixture = try await PublicRequestNode()
        } teardown: {
            await state.fixture?.stop()
            state.fixture = nil
        }
    }
}
