// End-to-end write throughput over HTTP: a real ShoalNode in this process
// (Hummingbird listeners on 127.0.0.1, ephemeral ports, a database in a fresh
// temporary directory), and one keep-alive HTTP/1.1 connection that POSTs
// `/{db}/_bulk_docs` with 1000 new 1 KB documents per request.
//
// What one iteration measures: request transfer + JSON parse of the request +
// DocumentStore.save(batch:) (one transaction) + encoding and transfer of the
// response. The request body is built before the measurement starts.

import Benchmark
import BenchmarkSupport
import DocumentModel
import DocumentStore
import Foundation
import NIOCore
import ShoalNode

/// Documents per `_bulk_docs` request.
let docsPerRequest = 1_000
/// Requests per iteration (over the same connection).
let requestsPerIteration = 5

let docsPerSecond = BenchmarkMetric.custom("docs/s", polarity: .prefersLarger, useScalingFactor: false)

final class NodeFixture: Sendable {
    let directory: TemporaryDirectory
    let node: ShoalNode
    let client: KeepAliveHTTPClient
    let path = "/db/_bulk_docs"

    private init(directory: TemporaryDirectory, node: ShoalNode, client: KeepAliveHTTPClient) {
        self.directory = directory
        self.node = node
        self.client = client
    }

    static func start(durability: StoreConfiguration.Durability) async throws -> NodeFixture {
        let started = try await BenchmarkNode.start("node-\(durability.rawValue)", durability: durability)
        let client = try await KeepAliveHTTPClient.connect(host: "127.0.0.1", port: started.ports.adminPort)
        return NodeFixture(directory: started.directory, node: started.node, client: client)
    }

    func stop() async {
        await client.close()
        await node.stop()
        directory.remove()
    }
}


/// Flags a change of the median (p50) of more than 25% when comparing baselines
/// (`swift package benchmark baseline check`); shared 2-core machines are noisy.
var medianWithin25Percent: BenchmarkThresholds { BenchmarkThresholds(relative: [.p50: 25.0]) }

let benchmarks: @Sendable () -> Void = {
    QuietLogging.bootstrap()

    for durability in [StoreConfiguration.Durability.full, .normal] {
        let state = BenchmarkState<NodeFixture>(seed: durability == .full ? 0xB01C_F011 : 0xB01C_0E11)
        Benchmark(
            "bulk-docs-http",
            configuration: .init(
                metrics: [.throughput, .wallClock, .cpuTotal, docsPerSecond],
                tags: ["durability": durability.rawValue, "docs": String(docsPerRequest * requestsPerIteration)],
                timeUnits: .milliseconds,
                units: [docsPerSecond: .count],
                warmupIterations: 1,
                scalingFactor: .one,
                maxDuration: .seconds(10),
                maxIterations: 20,
                thresholds: [.wallClock: medianWithin25Percent, .throughput: medianWithin25Percent, docsPerSecond: medianWithin25Percent]
            )
        ) { benchmark in
            let fixture = state.current
            let bodies = (0..<requestsPerIteration).map { _ in
                BulkDocsRequest.body(ids: state.ids.next(docsPerRequest))
            }
            var responses: [KeepAliveHTTPClient.Response] = []
            responses.reserveCapacity(requestsPerIteration)
            benchmark.startMeasurement()
            let start = ContinuousClock.now
            for body in bodies {
                responses.append(try await fixture.client.post(fixture.path, json: body))
            }
            let elapsed = ContinuousClock.now - start
            benchmark.stopMeasurement()
            for response in responses {
                try BulkDocsRequest.check(response, count: docsPerRequest)
            }
            benchmark.measurement(docsPerSecond, ratePerSecond(docsPerRequest * requestsPerIteration, elapsed))
        } setup: {
            state.fixture = try await NodeFixture.start(durability: durability)
        } teardown: {
            await state.fixture?.stop()
            state.fixture = nil
        }
    }
}
