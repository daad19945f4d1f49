// Cost of conflict resolution (ARCHITECTURE.md §4), for 2 and 10 live branches of
// 1 KB bodies, and the time a 5-node mesh takes to settle 1000 conflicting
// documents after a partition heals.
//
//   model-resolve-<policy> (<n> branches)   ConflictResolver.resolve alone (pure, no I/O):
//                                           time per resolution (1000 inner iterations)
//   store-resolve-vs-raw-single (<n> branches)
//                                           DocumentStore.resolveConflict (merge) on a file-backed
//                                           store, one conflict per call (one transaction each), and
//                                           in the same iteration as many raw SQLite single-row
//                                           transactions: conflicts/s, rows/s and store % of raw
//   mesh-settle-1k (5 nodes)                partition {1,2} | {3,4,5}, both sides edit all 1000
//                                           task documents, then a continuous ring heals it: time
//                                           until no node has a conflict and all agree on every winner
//
// Every benchmark checks what it produced (merged body, tombstones, counts) and fails
// with BenchmarkFailure instead of reporting a number for a wrong result.

import Benchmark
import BenchmarkSupport
import DocumentModel
import DocumentStore
import Foundation

let branchCounts = [2, 10]

/// Conflicts resolved per iteration by the store benchmark (and raw rows inserted).
let storeConflictsPerIteration = 200
let storeWarmupIterations = 1
let storeMaxIterations = 10

let conflictsPerSecond = BenchmarkMetric.custom("conflicts/s", polarity: .prefersLarger, useScalingFactor: false)
let microsecondsPerConflict = BenchmarkMetric.custom("µs/conflict", polarity: .prefersSmaller, useScalingFactor: false)
let rawRowsPerSecond = BenchmarkMetric.custom("raw rows/s", polarity: .prefersLarger, useScalingFactor: false)
let rawMicrosecondsPerRow = BenchmarkMetric.custom("raw µs/row", polarity: .prefersSmaller, useScalingFactor: false)
let storePercentOfRaw = BenchmarkMetric.custom("store % of raw", polarity: .prefersLarger, useScalingFactor: false)

/// Flags a change of the median (p50) of more than 25% when comparing baselines
/// (`swift package benchmark baseline check`); shared 2-core machines are noisy.
var medianWithin25Percent: BenchmarkThresholds { BenchmarkThresholds(relative: [.p50: 25.0]) }

func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) * 1e-12
}

let benchmarks: @Sendable () -> Void = {
    QuietLogging.bootstrap()

    // MARK: Model: ConflictResolver.resolve, per resolution.

    for branchCount in branchCounts {
        let conflict = ConflictCase(branchCount: branchCount)
        let tree = conflict.tree, bodies = conflict.leafBodies, baseBody = conflict.base
        for policy in [ConflictPolicy.merge, .winner] {
            Benchmark(
                "model-resolve-\(policy) (\(branchCount) branches)",
                configuration: .init(
                    metrics: [.throughput, .wallClock],
                    tags: ["branches": String(branchCount), "body": "1KB"],
                    timeUnits: .nanoseconds,
                    warmupIterations: 3,
                    scalingFactor: .kilo,
                    maxDuration: .seconds(3),
                    maxIterations: 200,
                    thresholds: [.wallClock: medianWithin25Percent, .throughput: medianWithin25Percent]
                )
            ) { benchmark in
                // Checked once per iteration, outside the measurement.
                try conflict.check(
                    ConflictResolver.resolve(tree: tree, bodies: bodies, mergeBaseBody: baseBody, policy: policy),
                    policy: policy)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    blackHole(ConflictResolver.resolve(tree: tree, bodies: bodies, mergeBaseBody: baseBody, policy: policy))
                }
            }
        }
    }

    // MARK: Store: resolveConflict, one transaction per conflict, against raw single-row transactions.

    let policies = ConflictPolicies(default: .merge)
    for branchCount in branchCounts {
        let state = StoreResolveState(branchCount: branchCount)
        let rawBody = Data(SampleBody.canonicalBytes)
        let rates = [conflictsPerSecond, microsecondsPerConflict, rawRowsPerSecond, rawMicrosecondsPerRow, storePercentOfRaw]
        Benchmark(
            "store-resolve-vs-raw-single (\(branchCount) branches)",
            configuration: .init(
                metrics: [.wallClock, .cpuTotal] + rates,
                tags: ["branches": String(branchCount), "policy": "merge", "durability": "normal",
                       "conflicts": String(storeConflictsPerIteration)],
                timeUnits: .milliseconds,
                units: Dictionary(uniqueKeysWithValues: rates.map { ($0, .count) }),
                warmupIterations: storeWarmupIterations,
                scalingFactor: .one,
                maxDuration: .seconds(60),
                maxIterations: storeMaxIterations,
                thresholds: [conflictsPerSecond: medianWithin25Percent, storePercentOfRaw: medianWithin25Percent]
            )
        ) { benchmark in
            let store = state.store!.store, raw = state.raw!
            let docIDs = try state.next(storeConflictsPerIteration)
            let rawIDs = state.rawIDs.next(storeConflictsPerIteration)
            state.iteration += 1
            var storeElapsed = Duration.zero, rawElapsed = Duration.zero
            // Both in every iteration, alternating which goes first, so they see the same machine state.
            for step in state.iteration.isMultiple(of: 2) ? [0, 1] : [1, 0] {
                let start = ContinuousClock.now
                if step == 0 {
                    for id in rawIDs { try await raw.insertSingle(id: id, body: rawBody) }
                    rawElapsed = ContinuousClock.now - start
                } else {
                    for docID in docIDs {
                        let outcome = try await store.resolveConflict(docID: docID, policies: policies)
                        guard case .resolved(let resolution) = outcome, resolution.revisions.count == branchCount else {
                            throw BenchmarkFailure("\(docID): expected a merge writing \(branchCount) revisions, got \(outcome)")
                        }
                    }
                    storeElapsed = ContinuousClock.now - start
                }
            }
            benchmark.stopMeasurement()
            try await state.verify(docIDs)
            let rawCount = try await raw.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM raw") ?? -1 }
            guard rawCount == state.iteration * storeConflictsPerIteration else {
                throw BenchmarkFailure("raw table has \(rawCount) rows, expected \(state.iteration * storeConflictsPerIteration)")
            }
            let n = Double(storeConflictsPerIteration)
            benchmark.measurement(conflictsPerSecond, ratePerSecond(storeConflictsPerIteration, storeElapsed))
            benchmark.measurement(microsecondsPerConflict, Int((microseconds(storeElapsed) / n).rounded()))
            benchmark.measurement(rawRowsPerSecond, ratePerSecond(storeConflictsPerIteration, rawElapsed))
            benchmark.measurement(rawMicrosecondsPerRow, Int((microseconds(rawElapsed) / n).rounded()))
            benchmark.measurement(storePercentOfRaw, Int((100 * (rawElapsed / storeElapsed)).rounded()))
        } setup: {
            try await state.prepare(count: storeConflictsPerIteration * (storeWarmupIterations + storeMaxIterations))
        } teardown: {
            state.close()
        }
    }

    // MARK: Mesh: 5 nodes settle 1000 conflicting documents after a partition heals.

    registerMeshSettle()
}
