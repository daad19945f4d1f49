// Write throughput of DocumentStore against raw SQLite (GRDB), same disk, same
// durability, same 1 KB body, same keys, in the same run.
//
//   raw-sqlite-insert-batch   N rows, one transaction, one cached statement (the physical limit)
//   store-save-batch          DocumentStore.save(batch:) of the same N new documents (one transaction)
//   store-vs-raw-batch        both of the above back to back in every iteration; reports store/raw in %
//   raw-sqlite-insert-single  one row per transaction
//   store-save-single         one document per save(_:) call (one transaction each)
//
// Every benchmark is tagged with its durability (`full` = PRAGMA synchronous=FULL,
// `normal` = NORMAL); the database is WAL in a fresh temporary directory.

import Benchmark
import BenchmarkSupport
import DocumentModel
import DocumentStore
import Foundation

/// Documents written per iteration by the batch benchmarks (one transaction).
let batchSize = 10_000
/// Documents written per iteration by the single-write benchmarks (one transaction each).
let singleCount = 1_000

let docsPerSecond = BenchmarkMetric.custom("docs/s", polarity: .prefersLarger, useScalingFactor: false)
let storeDocsPerSecond = BenchmarkMetric.custom("store docs/s", polarity: .prefersLarger, useScalingFactor: false)
let rawDocsPerSecond = BenchmarkMetric.custom("raw docs/s", polarity: .prefersLarger, useScalingFactor: false)
let storePercentOfRaw = BenchmarkMetric.custom("store % of raw", polarity: .prefersLarger, useScalingFactor: false)

let durabilities: [StoreConfiguration.Durability] = [.full, .normal]

/// Same keys for the raw baseline and the store of one durability.
func seed(_ durability: StoreConfiguration.Durability, single: Bool) -> UInt64 {
    (durability == .full ? 0x5EED_F011 : 0x5EED_0E11) &+ (single ? 1 : 0)
}

func configuration(_ durability: StoreConfiguration.Durability, documents: Int, iterations: Int,
                   rates: [BenchmarkMetric] = [docsPerSecond]) -> Benchmark.Configuration {
    .init(
        metrics: [.throughput, .wallClock, .cpuTotal] + rates,
        tags: ["durability": durability.rawValue, "docs": String(documents)],
        timeUnits: .milliseconds,
        units: [docsPerSecond: .count, storeDocsPerSecond: .count, rawDocsPerSecond: .count, storePercentOfRaw: .count],
        warmupIterations: 1,
        scalingFactor: .one,
        maxDuration: .seconds(10),
        maxIterations: iterations,
        thresholds: Dictionary(uniqueKeysWithValues: ([.wallClock, .throughput] + rates).map { ($0, medianWithin25Percent) })
    )
}

/// Flags a change of the median (p50) of more than 25% when comparing baselines
/// (`swift package benchmark baseline check`); shared 2-core machines are noisy.
var medianWithin25Percent: BenchmarkThresholds { BenchmarkThresholds(relative: [.p50: 25.0]) }

let benchmarks: @Sendable () -> Void = {
    let body = Data(SampleBody.canonicalBytes)

    for durability in durabilities {
        // MARK: Batches: N documents in one transaction.

        let rawBatch = BenchmarkState<RawSQLiteFixture>(seed: seed(durability, single: false))
        Benchmark("raw-sqlite-insert-batch",
                  configuration: configuration(durability, documents: batchSize, iterations: 15)) { benchmark in
            let fixture = rawBatch.current
            let ids = rawBatch.ids.next(batchSize)
            benchmark.startMeasurement()
            let start = ContinuousClock.now
            try await fixture.insertBatch(ids: ids, body: body)
            let elapsed = ContinuousClock.now - start
            benchmark.stopMeasurement()
            benchmark.measurement(docsPerSecond, ratePerSecond(batchSize, elapsed))
        } setup: {
            rawBatch.fixture = try RawSQLiteFixture(durability: durability)
        } teardown: {
            rawBatch.fixture?.close()
            rawBatch.fixture = nil
        }

        let storeBatch = BenchmarkState<StoreFixture>(seed: seed(durability, single: false))
        Benchmark("store-save-batch",
                  configuration: configuration(durability, documents: batchSize, iterations: 15)) { benchmark in
            let fixture = storeBatch.current
            let updates = StoreFixture.newDocuments(storeBatch.ids.next(batchSize))
            benchmark.startMeasurement()
            let start = ContinuousClock.now
            try await fixture.saveBatch(updates)
            let elapsed = ContinuousClock.now - start
            benchmark.stopMeasurement()
            benchmark.measurement(docsPerSecond, ratePerSecond(batchSize, elapsed))
        } setup: {
            storeBatch.fixture = try StoreFixture(durability: durability)
        } teardown: {
            storeBatch.fixture?.close()
            storeBatch.fixture = nil
        }

        // Both in every iteration, interleaved (alternating which goes first), so that they
        // see the same machine state; "store % of raw" is store-save-batch / raw-sqlite-insert-batch.
        let raw = BenchmarkState<RawSQLiteFixture>(seed: seed(durability, single: false))
        let store = BenchmarkState<StoreFixture>(seed: seed(durability, single: false))
        Benchmark("store-vs-raw-batch",
                  configuration: configuration(durability, documents: batchSize, iterations: 12,
                                               rates: [rawDocsPerSecond, storeDocsPerSecond, storePercentOfRaw])) { benchmark in
            let ids = raw.ids.next(batchSize)
            _ = store.ids.next(batchSize)
            let updates = StoreFixture.newDocuments(ids)
            raw.iteration += 1
            var rawElapsed = Duration.zero
            var storeElapsed = Duration.zero
            for step in raw.iteration.isMultiple(of: 2) ? [0, 1] : [1, 0] {
                let start = ContinuousClock.now
                if step == 0 {
                    try await raw.current.insertBatch(ids: ids, body: body)
                    rawElapsed = ContinuousClock.now - start
                } else {
                    try await store.current.saveBatch(updates)
                    storeElapsed = ContinuousClock.now - start
                }
            }
            benchmark.measurement(rawDocsPerSecond, ratePerSecond(batchSize, rawElapsed))
            benchmark.measurement(storeDocsPerSecond, ratePerSecond(batchSize, storeElapsed))
            benchmark.measurement(storePercentOfRaw, Int((100 * (rawElapsed / storeElapsed)).rounded()))
        } setup: {
            raw.fixture = try RawSQLiteFixture(durability: durability)
            store.fixture = try StoreFixture(durability: durability)
        } teardown: {
            raw.fixture?.close()
            store.fixture?.close()
            raw.fixture = nil
            store.fixture = nil
        }

        // MARK: Singles: one document per transaction (one commit, one fsync with FULL).

        let rawSingle = BenchmarkState<RawSQLiteFixture>(seed: seed(durability, single: true))
        Benchmark("raw-sqlite-insert-single",
                  configuration: configuration(durability, documents: singleCount, iterations: 10)) { benchmark in
            let fixture = rawSingle.current
            let ids = rawSingle.ids.next(singleCount)
            benchmark.startMeasurement()
            let start = ContinuousClock.now
            for id in ids {
                try await fixture.insertSingle(id: id, body: body)
            }
            let elapsed = ContinuousClock.now - start
            benchmark.stopMeasurement()
            benchmark.measurement(docsPerSecond, ratePerSecond(singleCount, elapsed))
        } setup: {
            rawSingle.fixture = try RawSQLiteFixture(durability: durability)
        } teardown: {
            rawSingle.fixture?.close()
            rawSingle.fixture = nil
        }

        let storeSingle = BenchmarkState<StoreFixture>(seed: seed(durability, single: true))
        Benchmark("store-save-single",
                  configuration: configuration(durability, documents: singleCount, iterations: 10)) { benchmark in
            let fixture = storeSingle.current
            let updates = StoreFixture.newDocuments(storeSingle.ids.next(singleCount))
            benchmark.startMeasurement()
            let start = ContinuousClock.now
            for update in updates {
                _ = try await fixture.store.save(update)
            }
            let elapsed = ContinuousClock.now - start
            benchmark.stopMeasurement()
            benchmark.measurement(docsPerSecond, ratePerSecond(singleCount, elapsed))
        } setup: {
            storeSingle.fixture = try StoreFixture(durability: durability)
        } teardown: {
            storeSingle.fixture?.close()
            storeSingle.fixture = nil
        }
    }
}
