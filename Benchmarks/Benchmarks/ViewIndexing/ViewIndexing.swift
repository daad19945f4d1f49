// Map/reduce views (Query) over 100k × 1 KB documents, against raw SQLite in the same run.
//
//   view-build-vs-raw     a full index build of a one-emit map over the 100k documents (a new
//                         signature each iteration, so each one builds from scratch), and the raw
//                         SQLite insert of the same 100k rows (id + 1 KB body, one transaction);
//                         reports both rates and build % of raw
//   view-range-100        a 100-row key range (startkey + limit=100) on the built index: latency
//   view-reduce-group-1   `_count` with group_level=1 over 100k rows ([g, k] keys, 100 groups),
//                         from the stored reductions: latency
//
// The documents are written once (setup), in normal durability, WAL, fresh temporary directory.

import Benchmark
import BenchmarkSupport
import DocumentModel
import DocumentStore
import Foundation
import Query

let documentCount = 100_000

let buildDocsPerSecond = BenchmarkMetric.custom("build docs/s", polarity: .prefersLarger, useScalingFactor: false)
let rawDocsPerSecond = BenchmarkMetric.custom("raw docs/s", polarity: .prefersLarger, useScalingFactor: false)
let buildPercentOfRaw = BenchmarkMetric.custom("build % of raw", polarity: .prefersLarger, useScalingFactor: false)

/// The populated store and its engine, shared by all benchmarks of the run.
final class ViewFixture: @unchecked Sendable {
    let store: StoreFixture
    let engine: ViewEngine
    let ids: [String]

    init() async throws {
        store = try StoreFixture(durability: .normal)
        var generator = DocumentIDGenerator(seed: 0x71E5)
        ids = generator.next(documentCount)
        for start in stride(from: 0, to: documentCount, by: 10_000) {
            let updates = ids[start..<min(start + 10_000, documentCount)].enumerated().map { offset, id in
                var body = SampleBody.properties
                body["k"] = .int(Int64(start + offset))
                body["g"] = .string("group-\((start + offset) % 100)")
                return DocumentUpdate(docID: id, body: body, mode: .edit(parent: nil))
            }
            try await store.saveBatch(updates)
        }
        engine = ViewEngine(store: store.store, options: .init(updatesInBackground: false))
    }

    func builtIndex(_ definition: ViewDefinition, name: String) async throws -> ViewIndex {
        let index = try await engine.index(for: definition, viewName: name)
        try await index.update()
        return index
    }
}

nonisolated(unsafe) var shared: ViewFixture?

func fixture() async throws -> ViewFixture {
    if let shared { return shared }
    let made = try await ViewFixture()
    shared = made
    return made
}

let oneEmit = "function(doc) { emit(doc.k, null); }"
let grouped = ViewDefinition(map: "function(doc) { emit([doc.g, doc.k], null); }", reduce: "_count")

let benchmarks: @Sendable () -> Void = {
    QuietLogging.bootstrap()
    let body = Data(SampleBody.canonicalBytes)
    let state = BenchmarkState<RawSQLiteFixture>(seed: 0x71E5)

    Benchmark("view-build-vs-raw", configuration: .init(
        metrics: [.wallClock, .cpuTotal, buildDocsPerSecond, rawDocsPerSecond, buildPercentOfRaw],
        tags: ["docs": String(documentCount)], timeUnits: .milliseconds,
        units: [buildDocsPerSecond: .count, rawDocsPerSecond: .count, buildPercentOfRaw: .count],
        warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(60), maxIterations: 3
    )) { benchmark in
        let views = try await fixture()
        state.iteration += 1
        // A new signature each iteration: a build from scratch.
        let definition = ViewDefinition(map: oneEmit + " /* \(state.iteration) */")
        let start = ContinuousClock.now
        _ = try await views.builtIndex(definition, name: "build\(state.iteration)")
        let buildElapsed = ContinuousClock.now - start
        let raw = try RawSQLiteFixture(durability: .normal)
        defer { raw.close() }
        let rawStart = ContinuousClock.now
        try await raw.insertBatch(ids: views.ids, body: body)
        let rawElapsed = ContinuousClock.now - rawStart
        let buildRate = ratePerSecond(documentCount, buildElapsed)
        let rawRate = ratePerSecond(documentCount, rawElapsed)
        benchmark.measurement(buildDocsPerSecond, buildRate)
        benchmark.measurement(rawDocsPerSecond, rawRate)
        benchmark.measurement(buildPercentOfRaw, rawRate > 0 ? buildRate * 100 / rawRate : 0)
    } setup: {
        _ = try await fixture()
    }

    Benchmark("view-range-100", configuration: .init(
        metrics: [.wallClock, .cpuTotal], timeUnits: .microseconds, warmupIterations: 5,
        scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 500
    )) { benchmark in
        let views = try await fixture()
        let index = try await views.builtIndex(ViewDefinition(map: oneEmit), name: "range")
        var query = ViewQuery()
        query.update = .false
        query.startKey = .int(Int64.random(in: 0..<Int64(documentCount - 100)))
        query.limit = 100
        benchmark.startMeasurement()
        let result = try await views.engine.run(query, on: index, visibility: nil)
        benchmark.stopMeasurement()
        guard case .rows(_, _, let rows, _) = result, rows.count == 100 else { fatalError("expected 100 rows") }
    } setup: {
        _ = try await fixture().builtIndex(ViewDefinition(map: oneEmit), name: "range")
    }

    Benchmark("view-reduce-group-1", configuration: .init(
        metrics: [.wallClock, .cpuTotal], timeUnits: .microseconds, warmupIterations: 3,
        scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 200
    )) { benchmark in
        let views = try await fixture()
        let index = try await views.builtIndex(grouped, name: "grouped")
        var query = ViewQuery()
        query.update = .false
        query.groupLevel = 1
        benchmark.startMeasurement()
        let result = try await views.engine.run(query, on: index, visibility: nil)
        benchmark.stopMeasurement()
        guard case .reduced(let rows, _) = result, rows.count == 100 else { fatalError("expected 100 groups") }
    } setup: {
        _ = try await fixture().builtIndex(grouped, name: "grouped")
    }
}
