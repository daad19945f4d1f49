// Speed as users see it: one `shoal serve` process per node (the release binary of this
// checkout, loopback, default durability), driven over HTTP like a user would.
//
//   two-process-pull     a source process loaded with 100k × 1 KB documents; each iteration
//                        a fresh target process pulls them one-shot
//                        (`PUT /db/_replication/{id} {"remote": …, "direction": "pull"}`)
//                        until its doc_count is 100k; then the raw SQLite insert of the same
//                        rows (GRDB, one transaction, same pragmas) in the same iteration.
//                        Reports docs/s, raw docs/s, % of raw, CPU ms per 1,000 documents of
//                        each process, peak RSS of each.
//   two-process-push     the same, the source pushing to a fresh target.
//   write-to-peer        two processes with a continuous push+pull; one `PUT` on A, timed
//                        until B's `_changes?feed=longpoll` reports it (one sample each).
//   write-to-peer-loaded the same while another connection writes 2,000 docs/s to A.
//   mesh-fanout-8        8 processes, static peers, at most 4 links each: one `PUT` on node 1,
//                        timed until all 7 others' changes feeds list it.
//   bulk-docs-process    `POST /db/_bulk_docs` of 1,000 new 1 KB documents, 5 requests per
//                        sample over one keep-alive connection, to a node process (default
//                        `full` durability); BulkDocsHTTP measures the same with the node
//                        inside the benchmark process.
//   idle-node            one idle process with one database: RSS and CPU per second.
//   idle-mesh-8          the 8 processes of mesh-fanout-8, idle: mean RSS and CPU per second.
//   get-doc-admin, get-doc-public-basic   a read on the admin port against the same read
//                        as a user on the public port (PublicRequests.swift).
//
// The release binary is built by the first benchmark that needs it
// (`make release` in the checkout).

import Benchmark
import BenchmarkSupport
import DocumentStore
import Foundation
import NIOCore

let documentCount = 100_000

let docsPerSecond = BenchmarkMetric.custom("docs/s", polarity: .prefersLarger, useScalingFactor: false)
let rawDocsPerSecond = BenchmarkMetric.custom("raw docs/s", polarity: .prefersLarger, useScalingFactor: false)
let percentOfRaw = BenchmarkMetric.custom("% of raw", polarity: .prefersLarger, useScalingFactor: false)
let sourceCPU = BenchmarkMetric.custom("source CPU ms/1k docs", polarity: .prefersSmaller, useScalingFactor: false)
let targetCPU = BenchmarkMetric.custom("target CPU ms/1k docs", polarity: .prefersSmaller, useScalingFactor: false)
let sourceRSS = BenchmarkMetric.custom("source peak RSS MB", polarity: .prefersSmaller, useScalingFactor: false)
let targetRSS = BenchmarkMetric.custom("target peak RSS MB", polarity: .prefersSmaller, useScalingFactor: false)
let idleRSS = BenchmarkMetric.custom("idle RSS MB", polarity: .prefersSmaller, useScalingFactor: false)
let idleCPU = BenchmarkMetric.custom("idle CPU ms/s", polarity: .prefersSmaller, useScalingFactor: false)

/// The loaded source process, shared by the pull and push benchmarks of a run.
final class Source: @unchecked Sendable {
    let node: NodeProcess
    let ids: [String]

    init() async throws {
        node = try await NodeProcess.start("source")
        var generator = DocumentIDGenerator(seed: 0x2_9E0C)
        ids = generator.next(documentCount)
        try await node.load(ids)
        try await node.waitForDocuments(documentCount)
    }
}

nonisolated(unsafe) var sharedSource: Source?

func source() async throws -> Source {
    if let sharedSource { return sharedSource }
    let made = try await Source()
    sharedSource = made
    return made
}

/// One replication into a fresh target, measured; `start` begins it (on either node).
func measureReplication(
    _ benchmark: Benchmark, start: (_ source: NodeProcess, _ target: NodeProcess) async throws -> Void
) async throws {
    let loaded = try await source()
    let target = try await NodeProcess.start("target")
    let (sourceBefore, targetBefore) = (loaded.node.cpuSeconds, target.cpuSeconds)
    let began = ContinuousClock.now
    try await start(loaded.node, target)
    try await target.waitForDocuments(documentCount)
    let elapsed = ContinuousClock.now - began
    let (sourceUsed, targetUsed) = (loaded.node.cpuSeconds - sourceBefore, target.cpuSeconds - targetBefore)
    let targetPeak = target.peakRSSMegabytes
    await target.stop()

    let raw = try RawSQLiteFixture(durability: .full)
    defer { raw.close() }
    let rawStart = ContinuousClock.now
    try await raw.insertBatch(ids: loaded.ids, body: Data(SampleBody.canonicalBytes))
    let rawElapsed = ContinuousClock.now - rawStart

    let rate = ratePerSecond(documentCount, elapsed)
    let rawRate = ratePerSecond(documentCount, rawElapsed)
    benchmark.measurement(docsPerSecond, rate)
    benchmark.measurement(rawDocsPerSecond, rawRate)
    benchmark.measurement(percentOfRaw, rawRate > 0 ? rate * 100 / rawRate : 0)
    benchmark.measurement(sourceCPU, Int((sourceUsed * 1e6 / Double(documentCount)).rounded()))
    benchmark.measurement(targetCPU, Int((targetUsed * 1e6 / Double(documentCount)).rounded()))
    benchmark.measurement(sourceRSS, Int(loaded.node.peakRSSMegabytes.rounded()))
    benchmark.measurement(targetRSS, Int(targetPeak.rounded()))
}

/// Writes probe documents on one node over a keep-alive connection.
final class ProbeWriter: @unchecked Sendable {
    let client: KeepAliveHTTPClient
    var counter = 0

    init(node: NodeProcess) async throws {
        client = try await KeepAliveHTTPClient.connect(host: "127.0.0.1", port: node.adminPort)
    }

    /// PUTs a new document; returns its ID.
    func write() async throws -> String {
        counter += 1
        let id = "probe-\(counter)"
        var body = ByteBuffer()
        body.writeString(#"{"n": \#(counter)}"#)
        let written = try await client.request(.PUT, "/db/\(id)", body: body)
        guard written.status == .created else { throw BenchmarkFailure("PUT answered \(written.status)") }
        return id
    }
}

/// Two processes linked by a continuous push+pull, and a write-then-see probe.
final class PeerPair: @unchecked Sendable {
    let a: NodeProcess
    let b: NodeProcess
    let writer: ProbeWriter
    let watcher: ChangesWatcher

    init() async throws {
        a = try await NodeProcess.start("peer-a")
        b = try await NodeProcess.start("peer-b")
        try await a.startReplication(
            "live", definition: #"{"remote": "\#(b.databaseURL)", "direction": "pushAndPull", "continuous": true}"#)
        writer = try await ProbeWriter(node: a)
        watcher = try await ChangesWatcher(node: b)
        // The link is up once a first document crosses.
        try await watcher.waitFor(try await writer.write())
    }

    /// Writes one document on A and returns once B's changes feed lists it.
    func probe() async throws {
        try await watcher.waitFor(try await writer.write())
    }

    func stop() async {
        await writer.client.close()
        await watcher.close()
        await a.stop()
        await b.stop()
    }
}

/// `meshSize` processes with static peers (each names all others) and at most 4 links
/// each, so most pairs are not linked directly; a write on the first node is timed until
/// every node's changes feed lists it.
final class Mesh: @unchecked Sendable {
    let nodes: [NodeProcess]
    let writer: ProbeWriter
    let watchers: [ChangesWatcher]

    init(size: Int) async throws {
        let ports = try (0..<size).map { _ in try NodeProcess.freePort() }
        var nodes: [NodeProcess] = []
        for (index, port) in ports.enumerated() {
            let peers = ports.enumerated().filter { $0.offset != index }.flatMap { ["--peer", "ws://127.0.0.1:\($0.element)/db"] }
            nodes.append(try await NodeProcess.start("mesh-\(index)", port: port, arguments: ["--max-peers", "4"] + peers))
        }
        self.nodes = nodes
        writer = try await ProbeWriter(node: nodes[0])
        var watchers: [ChangesWatcher] = []
        for node in nodes.dropFirst() { watchers.append(try await ChangesWatcher(node: node)) }
        self.watchers = watchers
        try await probe()
    }

    /// Writes one document on the first node and returns once every other node lists it.
    func probe() async throws {
        let id = try await writer.write()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for watcher in watchers { group.addTask { try await watcher.waitFor(id) } }
            try await group.waitForAll()
        }
    }

    func stop() async {
        await writer.client.close()
        for watcher in watchers { await watcher.close() }
        for node in nodes { await node.stop() }
    }
}

/// Writes `rate` documents per second to a node in batches every 10 ms until cancelled.
func backgroundLoad(on node: NodeProcess, rate: Int) -> Task<Void, any Error> {
    Task {
        let client = try await KeepAliveHTTPClient.connect(host: "127.0.0.1", port: node.adminPort)
        defer { Task { await client.close() } }
        var generator = DocumentIDGenerator(seed: 0x10AD)
        let perTick = rate / 100
        var next = ContinuousClock.now
        while !Task.isCancelled {
            let response = try await client.post("/db/_bulk_docs", json: BulkDocsRequest.body(ids: generator.next(perTick)))
            try BulkDocsRequest.check(response, count: perTick)
            next += .milliseconds(10)
            try await Task.sleep(until: next)
        }
    }
}

let benchmarks: @Sendable () -> Void = {
    QuietLogging.bootstrap()

    for direction in ["pull", "push"] {
        let state = BenchmarkState<Void>(seed: 0)
        Benchmark("two-process-\(direction)", configuration: .init(
            metrics: [.wallClock, docsPerSecond, rawDocsPerSecond, percentOfRaw, sourceCPU, targetCPU, sourceRSS, targetRSS],
            tags: ["docs": String(documentCount)], timeUnits: .milliseconds,
            units: [docsPerSecond: .count, rawDocsPerSecond: .count, percentOfRaw: .count, sourceCPU: .count,
                    targetCPU: .count, sourceRSS: .count, targetRSS: .count],
            warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(120), maxIterations: 3
        )) { benchmark in
            state.iteration += 1
            let id = "\(direction)-\(state.iteration)"
            try await measureReplication(benchmark) { source, target in
                if direction == "pull" {
                    try await target.startReplication(id, definition: #"{"remote": "\#(source.databaseURL)", "direction": "pull"}"#)
                } else {
                    try await source.startReplication(id, definition: #"{"remote": "\#(target.databaseURL)", "direction": "push"}"#)
                }
            }
            if direction == "push" { try await source().node.removeReplication(id) }
        } setup: {
            _ = try await source()
        } teardown: {
            await sharedSource?.node.stop()
            sharedSource = nil
        }
    }

    for loaded in [false, true] {
        let state = BenchmarkState<PeerPair>(seed: 0)
        let background = BenchmarkState<Task<Void, any Error>>(seed: 0)
        Benchmark(loaded ? "write-to-peer-loaded" : "write-to-peer", configuration: .init(
            metrics: [.wallClock], timeUnits: .microseconds, warmupIterations: 10,
            scalingFactor: .one, maxDuration: .seconds(60), maxIterations: 1_000
        )) { benchmark in
            benchmark.startMeasurement()
            try await state.current.probe()
            benchmark.stopMeasurement()
        } setup: {
            state.fixture = try await PeerPair()
            if loaded { background.fixture = backgroundLoad(on: state.current.a, rate: 2_000) }
        } teardown: {
            background.fixture?.cancel()
            _ = await background.fixture?.result
            await state.fixture?.stop()
            state.fixture = nil
        }
    }

    let mesh = BenchmarkState<Mesh>(seed: 0)
    Benchmark("mesh-fanout-8", configuration: .init(
        metrics: [.wallClock], timeUnits: .microseconds, warmupIterations: 10,
        scalingFactor: .one, maxDuration: .seconds(60), maxIterations: 500
    )) { benchmark in
        benchmark.startMeasurement()
        try await mesh.current.probe()
        benchmark.stopMeasurement()
    } setup: {
        mesh.fixture = try await Mesh(size: 8)
    } teardown: {
        await mesh.fixture?.stop()
        mesh.fixture = nil
    }

    let bulk = BenchmarkState<NodeProcess>(seed: 0xB01C)
    Benchmark("bulk-docs-process", configuration: .init(
        metrics: [.wallClock, docsPerSecond], timeUnits: .milliseconds, units: [docsPerSecond: .count],
        warmupIterations: 1, scalingFactor: .one, maxDuration: .seconds(20), maxIterations: 20
    )) { benchmark in
        let bodies = (0..<5).map { _ in BulkDocsRequest.body(ids: bulk.ids.next(1_000)) }
        var responses: [KeepAliveHTTPClient.Response] = []
        benchmark.startMeasurement()
        let start = ContinuousClock.now
        for body in bodies { responses.append(try await bulk.current.admin.post("/db/_bulk_docs", json: body)) }
        let elapsed = ContinuousClock.now - start
        benchmark.stopMeasurement()
        for response in responses { try BulkDocsRequest.check(response, count: 1_000) }
        benchmark.measurement(docsPerSecond, ratePerSecond(5_000, elapsed))
    } setup: {
        bulk.fixture = try await NodeProcess.start("bulk")
    } teardown: {
        await bulk.fixture?.stop()
        bulk.fixture = nil
    }

    Benchmark("idle-node", configuration: .init(
        metrics: [idleRSS, idleCPU], units: [idleRSS: .count, idleCPU: .count],
        warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(30), maxIterations: 1
    )) { benchmark in
        let node = try await NodeProcess.start("idle")
        try await Task.sleep(for: .seconds(3))
        let before = node.cpuSeconds
        try await Task.sleep(for: .seconds(5))
        benchmark.measurement(idleCPU, Int(((node.cpuSeconds - before) * 1000 / 5).rounded()))
        benchmark.measurement(idleRSS, Int(node.rssMegabytes.rounded()))
        await node.stop()
    }

    Benchmark("idle-mesh-8", configuration: .init(
        metrics: [idleRSS, idleCPU], units: [idleRSS: .count, idleCPU: .count],
        warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(60), maxIterations: 1
    )) { benchmark in
        // The mesh of `mesh-fanout-8`, idle: what each node's links cost when nothing
        // happens (heartbeats, the replications' periodic checks).
        let idle = try await Mesh(size: 8)
        try await Task.sleep(for: .seconds(3))
        let before = idle.nodes.map(\.cpuSeconds)
        try await Task.sleep(for: .seconds(5))
        let used = zip(idle.nodes, before).map { $0.cpuSeconds - $1 }
        benchmark.measurement(idleCPU, Int((used.reduce(0, +) * 1000 / 5 / Double(used.count)).rounded()))
        benchmark.measurement(idleRSS, Int((idle.nodes.map(\.rssMegabytes).reduce(0, +) / Double(idle.nodes.count)).rounded()))
        await idle.stop()
    }

    publicRequestBenchmarks()
}
