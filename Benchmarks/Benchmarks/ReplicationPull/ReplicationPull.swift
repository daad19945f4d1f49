// End-to-end replication: a one-shot pull of 100k documents of 1 KB from one
// ShoalNode to another over BLIP/WebSocket on loopback (both nodes in this
// process, file-backed databases), compared in the same run with the raw SQLite
// insert of the same 100k bodies in one transaction (the physical limit).
//
// One iteration: a fresh empty receiver starts a pull replication from the
// loaded source and runs until it has every document (changes, revs_diff,
// rev messages, batched inserts, checkpoints). Peak resident memory covers the
// whole process (both nodes), so the receiver alone stays below it.

import Benchmark
import BenchmarkSupport
import DocumentModel
import DocumentStore
import Foundation
import Replication
import ShoalNode

let documentCount = 100_000
let docsPerSecond = BenchmarkMetric.custom("docs/s", polarity: .prefersLarger, useScalingFactor: false)

/// The source node, loaded once with `documentCount` documents.
final class Source: @unchecked Sendable {
    var node: ShoalNode?
    var directory: TemporaryDirectory?
    var port = 0
}

let benchmarks: @Sendable () -> Void = {
    QuietLogging.bootstrap()
    let source = Source()

    Benchmark(
        "replication-pull-100k",
        configuration: .init(
            metrics: [.wallClock, .cpuTotal, .peakMemoryResident, docsPerSecond],
            tags: ["docs": String(documentCount), "durability": "normal"],
            timeUnits: .milliseconds,
            units: [docsPerSecond: .count],
            warmupIterations: 0,
            scalingFactor: .one,
            maxDuration: .seconds(120),
            maxIterations: 3
        )
    ) { benchmark in
        let receiving = try await BenchmarkNode.start("receiver", durability: .normal)
        let receiver = receiving.node, store = receiving.store
        let configuration = ReplicationConfiguration(
            id: "bench", remote: "ws://127.0.0.1:\(source.port)/db", direction: .pull, continuous: false)
        benchmark.startMeasurement()
        let start = ContinuousClock.now
        let replicator = await receiver.replications.start(configuration, store: store)
        await replicator.waitUntilFinished()
        let elapsed = ContinuousClock.now - start
        benchmark.stopMeasurement()
        let count = store.info().docCount
        await receiving.stop()
        guard count == documentCount else {
            throw BenchmarkFailure("receiver has \(count) documents, expected \(documentCount): \(replicator.status)")
        }
        benchmark.measurement(docsPerSecond, ratePerSecond(documentCount, elapsed))
    } setup: {
        let started = try await BenchmarkNode.start("source", durability: .normal)
        let node = started.node, directory = started.directory, ports = started.ports
        var ids = DocumentIDGenerator(seed: 0x5EED_0001)
        let store = started.store
        for _ in 0..<(documentCount / 5_000) {
            _ = try await store.save(batch: StoreFixture.newDocuments(ids.next(5_000)))
        }
        source.node = node
        source.directory = directory
        source.port = ports.publicPort
    } teardown: {
        await source.node?.stop()
        source.directory?.remove()
    }

    Benchmark(
        "raw-sqlite-insert-100k",
        configuration: .init(
            metrics: [.wallClock, docsPerSecond],
            tags: ["docs": String(documentCount), "durability": "normal"],
            timeUnits: .milliseconds,
            units: [docsPerSecond: .count],
            warmupIterations: 0,
            scalingFactor: .one,
            maxDuration: .seconds(60),
            maxIterations: 3
        )
    ) { benchmark in
        let raw = try RawSQLiteFixture(durability: .normal)
        var ids = DocumentIDGenerator(seed: 0x5EED_0002)
        let allIDs = ids.next(documentCount)
        let body = Data(SampleBody.canonicalBytes)
        benchmark.startMeasurement()
        let start = ContinuousClock.now
        try await raw.insertBatch(ids: allIDs, body: body)
        let elapsed = ContinuousClock.now - start
        benchmark.stopMeasurement()
        raw.close()
        benchmark.measurement(docsPerSecond, ratePerSecond(documentCount, elapsed))
    }
}
