// Encryption at rest: the same work on a plain and on an encrypted database, in the
// same iteration (alternating which goes first), reporting encrypted % of plain.
//
//   encrypted-vs-plain-save-batch   DocumentStore.save(batch:) of 10k new 1 KB documents
//   encrypted-vs-plain-bulk-docs    POST /db/_bulk_docs, 5 × 1000 documents, keep-alive HTTP/1.1
//   encrypted-vs-plain-pull-100k    one-shot pull of 100k documents from a plain source node
//                                   into a fresh plain node and a fresh encrypted node
//   open-100k                       opening a database of 100k documents and reading one
//                                   document (time to first request), plain / key / passphrase
//
// The target is ≥ 70% of plain for the first three (issue 16).

import Benchmark
import BenchmarkSupport
import DocumentModel
import DocumentStore
import Foundation
import NIOCore
import Replication
import ShoalNode

let plainDocsPerSecond = BenchmarkMetric.custom("plain docs/s", polarity: .prefersLarger, useScalingFactor: false)
let encryptedDocsPerSecond = BenchmarkMetric.custom("encrypted docs/s", polarity: .prefersLarger, useScalingFactor: false)
let encryptedPercent = BenchmarkMetric.custom("encrypted % of plain", polarity: .prefersLarger, useScalingFactor: false)
let openMilliseconds = BenchmarkMetric.custom("open ms", polarity: .prefersSmaller, useScalingFactor: false)

let benchKey = EncryptionKey.key((0..<32).map { UInt8($0 * 7 & 0xff) })

func ratioConfiguration(docs: Int, iterations: Int, maxSeconds: Int = 30) -> Benchmark.Configuration {
    .init(
        metrics: [.wallClock, .cpuTotal, .peakMemoryResident, plainDocsPerSecond, encryptedDocsPerSecond, encryptedPercent],
        tags: ["docs": String(docs), "durability": "normal"],
        timeUnits: .milliseconds,
        units: [plainDocsPerSecond: .count, encryptedDocsPerSecond: .count, encryptedPercent: .count],
        warmupIterations: 1,
        scalingFactor: .one,
        maxDuration: .seconds(maxSeconds),
        maxIterations: iterations
    )
}

/// Runs `plain` and `encrypted` in the order the iteration's parity says and records both rates.
func measurePair(
    _ benchmark: Benchmark, iteration: Int, docs: Int,
    plain: () async throws -> Void, encrypted: () async throws -> Void
) async throws {
    var plainElapsed = Duration.zero
    var encryptedElapsed = Duration.zero
    for step in iteration.isMultiple(of: 2) ? [0, 1] : [1, 0] {
        let start = ContinuousClock.now
        if step == 0 {
            try await plain()
            plainElapsed = ContinuousClock.now - start
        } else {
            try await encrypted()
            encryptedElapsed = ContinuousClock.now - start
        }
    }
    let plainRate = ratePerSecond(docs, plainElapsed)
    let encryptedRate = ratePerSecond(docs, encryptedElapsed)
    benchmark.measurement(plainDocsPerSecond, plainRate)
    benchmark.measurement(encryptedDocsPerSecond, encryptedRate)
    benchmark.measurement(encryptedPercent, plainRate > 0 ? encryptedRate * 100 / plainRate : 0)
}

/// A node whose database `db` is encrypted with `benchKey` (key file in its own temp dir).
func encryptedNode(_ label: String) async throws -> (BenchmarkNode, TemporaryDirectory) {
    let keys = try TemporaryDirectory("\(label)-key")
    let path = keys.path + "/key"
    try Data((benchKey.hex! + "\n").utf8).write(to: URL(fileURLWithPath: path))
    let node = try await BenchmarkNode.start(label, durability: .normal) { $0.encryption = .keyFile(path) }
    return (node, keys)
}

final class NodePair: @unchecked Sendable {
    var plain: BenchmarkNode?
    var encrypted: BenchmarkNode?
    var keys: TemporaryDirectory?
    var plainClient: KeepAliveHTTPClient?
    var encryptedClient: KeepAliveHTTPClient?
    var ids = DocumentIDGenerator(seed: 0xE4C0_0001)
    var iteration = 0
    var sourcePort = 0
}

let benchmarks: @Sendable () -> Void = {
    QuietLogging.bootstrap()

    // MARK: Batched saves

    let batch = 10_000
    let stores = BenchmarkState<(StoreFixture, StoreFixture)>(seed: 0xE4C0_0002)
    Benchmark("encrypted-vs-plain-save-batch", configuration: ratioConfiguration(docs: batch, iterations: 12)) { benchmark in
        let (plain, encrypted) = stores.current
        let updates = StoreFixture.newDocuments(stores.ids.next(batch))
        stores.iteration += 1
        try await measurePair(benchmark, iteration: stores.iteration, docs: batch,
                              plain: { try await plain.saveBatch(updates) },
                              encrypted: { try await encrypted.saveBatch(updates) })
    } setup: {
        stores.fixture = (try StoreFixture(durability: .normal), try StoreFixture(durability: .normal, encryption: benchKey))
    } teardown: {
        stores.fixture?.0.close()
        stores.fixture?.1.close()
        stores.fixture = nil
    }

    // MARK: _bulk_docs over HTTP

    let http = NodePair()
    let perRequest = 1_000, requests = 5
    Benchmark("encrypted-vs-plain-bulk-docs", configuration: ratioConfiguration(docs: perRequest * requests, iterations: 12)) { benchmark in
        guard let plainClient = http.plainClient, let encryptedClient = http.encryptedClient else {
            throw BenchmarkFailure("setup did not run")
        }
        let bodies = (0..<requests).map { _ in BulkDocsRequest.body(ids: http.ids.next(perRequest)) }
        http.iteration += 1
        func post(_ client: KeepAliveHTTPClient) async throws {
            for body in bodies { try BulkDocsRequest.check(try await client.post("/db/_bulk_docs", json: body), count: perRequest) }
        }
        try await measurePair(benchmark, iteration: http.iteration, docs: perRequest * requests,
                              plain: { try await post(plainClient) }, encrypted: { try await post(encryptedClient) })
    } setup: {
        let plain = try await BenchmarkNode.start("http-plain", durability: .normal)
        let (encrypted, keys) = try await encryptedNode("http-encrypted")
        http.plain = plain
        http.encrypted = encrypted
        http.keys = keys
        http.plainClient = try await KeepAliveHTTPClient.connect(host: "127.0.0.1", port: plain.ports.adminPort)
        http.encryptedClient = try await KeepAliveHTTPClient.connect(host: "127.0.0.1", port: encrypted.ports.adminPort)
    } teardown: {
        await http.plainClient?.close()
        await http.encryptedClient?.close()
        await http.plain?.stop()
        await http.encrypted?.stop()
        http.keys?.remove()
    }

    // MARK: A 100k pull into a fresh plain node and a fresh encrypted node

    let pullCount = 100_000
    let pull = NodePair()
    Benchmark("encrypted-vs-plain-pull-100k", configuration: ratioConfiguration(docs: pullCount, iterations: 3, maxSeconds: 180)) { benchmark in
        pull.iteration += 1
        func pullInto(_ receiving: BenchmarkNode) async throws {
            let configuration = ReplicationConfiguration(
                id: "bench", remote: "ws://127.0.0.1:\(pull.sourcePort)/db", direction: .pull, continuous: false)
            let replicator = await receiving.node.replications.start(configuration, store: receiving.store)
            await replicator.waitUntilFinished()
            let count = receiving.store.info().docCount
            guard count == pullCount else {
                throw BenchmarkFailure("receiver has \(count) documents, expected \(pullCount): \(replicator.status)")
            }
        }
        let plain = try await BenchmarkNode.start("pull-plain", durability: .normal)
        let (encrypted, keys) = try await encryptedNode("pull-encrypted")
        defer { keys.remove() }
        do {
            try await measurePair(benchmark, iteration: pull.iteration, docs: pullCount,
                                  plain: { try await pullInto(plain) }, encrypted: { try await pullInto(encrypted) })
        } catch {
            await plain.stop()
            await encrypted.stop()
            throw error
        }
        await plain.stop()
        await encrypted.stop()
    } setup: {
        let source = try await BenchmarkNode.start("pull-source", durability: .normal)
        var ids = DocumentIDGenerator(seed: 0xE4C0_0003)
        for _ in 0..<(pullCount / 5_000) {
            _ = try await source.store.save(batch: StoreFixture.newDocuments(ids.next(5_000)))
        }
        pull.plain = source
        pull.sourcePort = source.ports.publicPort
    } teardown: {
        await pull.plain?.stop()
    }

    // MARK: Opening a database of 100k documents

    let openCount = 100_000
    for variant in ["plain", "key", "passphrase"] {
        let secret: EncryptionKey? = switch variant {
        case "key": benchKey
        case "passphrase": .passphrase("a bench passphrase")
        default: nil
        }
        let state = BenchmarkState<TemporaryDirectory>(seed: 0xE4C0_0004)
        Benchmark("open-100k", configuration: .init(
            metrics: [.wallClock, openMilliseconds],
            tags: ["encryption": variant, "docs": String(openCount)],
            timeUnits: .milliseconds,
            units: [openMilliseconds: .count],
            warmupIterations: 1,
            scalingFactor: .one,
            maxDuration: .seconds(20),
            maxIterations: 10
        )) { benchmark in
            let directory = state.current
            let start = ContinuousClock.now
            let store = try DocumentStore(configuration: StoreConfiguration(
                name: "bench", location: .directory(directory.path), durability: .normal, encryption: secret))
            let first = try await store.revision(state.ids.next(1)[0]).1
            let elapsed = ContinuousClock.now - start
            store.close()
            guard first.body != nil else { throw BenchmarkFailure("no body") }
            benchmark.measurement(openMilliseconds, Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000))
            state.ids = DocumentIDGenerator(seed: 0xE4C0_0005)
        } setup: {
            let directory = try TemporaryDirectory("open-\(variant)")
            let store = try DocumentStore(configuration: StoreConfiguration(
                name: "bench", location: .directory(directory.path), durability: .normal, encryption: secret))
            var ids = DocumentIDGenerator(seed: 0xE4C0_0005)
            for _ in 0..<(openCount / 5_000) {
                _ = try await store.save(batch: StoreFixture.newDocuments(ids.next(5_000)))
            }
            try await store.compact()
            store.close()
            state.fixture = directory
            state.ids = DocumentIDGenerator(seed: 0xE4C0_0005)
        } teardown: {
            state.fixture?.remove()
        }
    }
}
