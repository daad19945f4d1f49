// Mango and live queries on 100k documents of 1 KB (DocumentStore + Query in this
// process; no HTTP in the way), in the same run:
//
//   find-indexed-100-of-100k   {"priority": N} with a json index on priority: 100 matches
//   find-scan-100-of-100k      the same query with no index: a scan of every document
//   index-build-100k           building that index from scratch (docs/s), and the raw
//                              SQLite insert of the same 100k rows (the physical limit)
//   live-query-latency         a live _find open; one save at a time that changes its
//                              result; time from the save returning to the new result
//                              reaching the consumer: p50 / p99

import Benchmark
import BenchmarkSupport
import DocumentModel
import DocumentStore
import Foundation
import Query

let documentCount = 100_000
let docsPerSecond = BenchmarkMetric.custom("docs/s", polarity: .prefersLarger, useScalingFactor: false)
let latencyMicros = BenchmarkMetric.custom("latency µs", polarity: .prefersSmaller, useScalingFactor: false)

/// The store, loaded once with `documentCount` documents whose `priority` is `i % 1000`.
final class Loaded: @unchecked Sendable {
    var fixture: StoreFixture?
    var engine: MangoEngine?
    var store: DocumentStore { fixture!.store }

    func load() async throws {
        let fixture = try StoreFixture(durability: .normal)
        var ids = DocumentIDGenerator(seed: 0x3A_1601)
        var index = 0
        for _ in 0..<(documentCount / 5_000) {
            let updates = ids.next(5_000).map { id -> DocumentUpdate in
                var body = SampleBody.properties
                body["priority"] = .int(Int64(index % 1000))
                index += 1
                return DocumentUpdate(docID: id, body: body, mode: .edit(parent: nil))
            }
            try await fixture.saveBatch(updates)
        }
        self.fixture = fixture
        engine = MangoEngine(store: fixture.store)
    }
}

func query(_ json: JSON) throws -> MangoQuery { try MangoQuery(json.objectValue!) }

let benchmarks: @Sendable () -> Void = {
    QuietLogging.bootstrap()
    let loaded = Loaded()
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .peakMemoryResident],
        tags: ["docs": String(documentCount)],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        scalingFactor: .one,
        maxDuration: .seconds(30),
        maxIterations: 50
    )

    Benchmark("find-indexed-100-of-100k", configuration: configuration) { benchmark in
        let engine = loaded.engine!
        let result = try await engine.find(try query(["selector": ["priority": 500], "limit": 1000, "use_index": "by-priority"])) { _ in true }
        guard result.documents.count == 100, result.warning == nil else {
            throw BenchmarkFailure("indexed find returned \(result.documents.count) (\(result.warning ?? "no warning"))")
        }
    } setup: {
        try await loaded.load()
        var created = ["index": ["fields": ["priority"]], "ddoc": "by-priority", "name": "priority"] as [String: JSON]
        created["type"] = "json"
        _ = try await loaded.engine!.create(try MangoIndexDefinition(request: created))
        _ = try await loaded.engine!.find(try query(["selector": ["priority": 0], "use_index": "by-priority"])) { _ in true }
    } teardown: {
        loaded.fixture?.close()
        loaded.fixture = nil
    }

    let scanning = Loaded()
    Benchmark("find-scan-100-of-100k", configuration: .init(
        metrics: [.wallClock, .cpuTotal], tags: ["docs": String(documentCount)], timeUnits: .milliseconds,
        warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(30), maxIterations: 5
    )) { benchmark in
        let result = try await scanning.engine!.find(try query(["selector": ["priority": 500], "limit": 1000])) { _ in true }
        guard result.documents.count == 100, result.warning != nil else { throw BenchmarkFailure("scan returned \(result.documents.count)") }
    } setup: {
        try await scanning.load()
    } teardown: {
        scanning.fixture?.close()
        scanning.fixture = nil
    }

    let building = Loaded()
    Benchmark("index-build-100k", configuration: .init(
        metrics: [.wallClock, .cpuTotal, docsPerSecond], tags: ["docs": String(documentCount)], timeUnits: .milliseconds,
        units: [docsPerSecond: .count], warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(60), maxIterations: 3
    )) { benchmark in
        // A new index (new name and fields each iteration) built from every document.
        building.fixture!.store.info()
        let name = "build-\(UUID().uuidString.prefix(8))"
        let definition = try MangoIndexDefinition(request: [
            "index": ["fields": ["priority", .string(name)]], "ddoc": .string(name), "name": .string(name),
        ])
        _ = try await building.engine!.create(definition)
        let start = ContinuousClock.now
        _ = try await building.engine!.find(try query(["selector": ["priority": 1, name: ["$exists": true]], "use_index": .string(name)])) { _ in true }
        benchmark.measurement(docsPerSecond, ratePerSecond(documentCount, ContinuousClock.now - start))
    } setup: {
        try await building.load()
    } teardown: {
        building.fixture?.close()
        building.fixture = nil
    }

    Benchmark("raw-sqlite-insert-100k", configuration: .init(
        metrics: [.wallClock, docsPerSecond], tags: ["docs": String(documentCount)], timeUnits: .milliseconds,
        units: [docsPerSecond: .count], warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(60), maxIterations: 3
    )) { benchmark in
        let raw = try RawSQLiteFixture(durability: .normal)
        var ids = DocumentIDGenerator(seed: 0x3A_1602)
        let allIDs = ids.next(documentCount)
        let body = Data(SampleBody.canonicalBytes)
        let start = ContinuousClock.now
        try await raw.insertBatch(ids: allIDs, body: body)
        benchmark.measurement(docsPerSecond, ratePerSecond(documentCount, ContinuousClock.now - start))
        raw.close()
    }

    let live = Loaded()
    Benchmark("live-query-latency", configuration: .init(
        metrics: [latencyMicros], tags: ["commits": "200"], timeUnits: .microseconds,
        units: [latencyMicros: .count], warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(60), maxIterations: 1
    )) { benchmark in
        let store = live.fixture!.store
        let engine = live.engine!
        let liveQuery = try query(["selector": ["type": "flag"], "limit": 1000])
        let events = LiveQuery.events(store: store, heartbeat: nil) {
            let result = try await engine.find(liveQuery) { _ in true }
            return .array(result.documents.map { .string($0.docID + "@" + $0.winner.description) })
        }
        var iterator = events.makeAsyncIterator()
        _ = try await iterator.next()   // the first result
        for round in 0..<200 {
            let saved = ContinuousClock.now
            _ = try await store.save(DocumentUpdate(docID: "flag-\(round)", body: ["type": "flag"], mode: .edit(parent: nil)))
            _ = try await iterator.next()
            let elapsed = ContinuousClock.now - saved
            benchmark.measurement(latencyMicros, Int(elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000))
        }
    } setup: {
        // A small database: the latency of the machinery, not of a scan.
        let fixture = try StoreFixture(durability: .normal)
        live.fixture = fixture
        live.engine = MangoEngine(store: fixture.store)
        _ = try await live.engine!.create(try MangoIndexDefinition(request: ["index": ["fields": ["type"]], "ddoc": "t", "name": "t"]))
    } teardown: {
        live.fixture?.close()
        live.fixture = nil
    }
}
