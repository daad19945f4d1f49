// A plain executable that repeats one write path in a loop, for profilers
// (`perf record`, `valgrind --tool=callgrind`) and for timing the steps of a write.
// Not a benchmark: `swift package benchmark` does not run it.
//
//   ShoalProfile store-batch  full|normal [batches] [docs per batch]
//   ShoalProfile raw-batch    full|normal [batches] [docs per batch]
//   ShoalProfile store-single full|normal [rounds] [docs per round]   (one save(_:) per document)
//   ShoalProfile raw-single   full|normal [rounds] [docs per round]   (one transaction per row)
//   ShoalProfile bulk-docs    full|normal [requests] [docs per request]   (SHOAL_PROFILE_SYNC=<js> adds a sync function)
//   ShoalProfile steps        [docs]      (CPU cost of each model step of a new-document write)
//   ShoalProfile pull         [rounds] [docs]  (one-shot BLIP pull between two nodes in this process)
//   ShoalProfile view-build   [batches] [docs per batch]  (a one-emit view built over the documents, then
//                             the raw insert of the same rows: wall and CPU time of each)

import BenchmarkSupport
import DocumentModel
import DocumentStore
import Foundation
import NIOCore
import Query
import Replication
import ShoalNode

func durability(_ argument: String?) -> StoreConfiguration.Durability {
    argument.flatMap(StoreConfiguration.Durability.init(rawValue:)) ?? .normal
}

func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
}

func report(_ label: String, docs: Int, _ elapsed: Duration) {
    print(String(format: "%@: %d docs in %.1f ms = %d docs/s", label, docs, seconds(elapsed) * 1000,
                 ratePerSecond(docs, elapsed)))
}

let arguments = CommandLine.arguments
let mode = arguments.count > 1 ? arguments[1] : "steps"
let count = arguments.count > 3 ? Int(arguments[3]) ?? 10 : 10
let size = arguments.count > 4 ? Int(arguments[4]) ?? 10_000 : 10_000
var ids = DocumentIDGenerator(seed: 42)

switch mode {
case "store-batch":
    let fixture = try StoreFixture(durability: durability(arguments.count > 2 ? arguments[2] : nil))
    var total = Duration.zero
    for i in 0..<count {
        let updates = StoreFixture.newDocuments(ids.next(size))
        let start = ContinuousClock.now
        try await fixture.saveBatch(updates)
        let elapsed = ContinuousClock.now - start
        total += elapsed
        report("store batch \(i)", docs: size, elapsed)
    }
    report("store total", docs: size * count, total)
    fixture.close()

case "raw-batch":
    let fixture = try RawSQLiteFixture(durability: durability(arguments.count > 2 ? arguments[2] : nil))
    let body = Data(SampleBody.canonicalBytes)
    var total = Duration.zero
    for i in 0..<count {
        let batch = ids.next(size)
        let start = ContinuousClock.now
        try await fixture.insertBatch(ids: batch, body: body)
        let elapsed = ContinuousClock.now - start
        total += elapsed
        report("raw batch \(i)", docs: size, elapsed)
    }
    report("raw total", docs: size * count, total)
    fixture.close()

case "view-build":
    func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
    let fixture = try StoreFixture(durability: .normal)
    var all: [String] = []
    for _ in 0..<count {
        let batch = ids.next(size)
        all += batch
        let updates = batch.enumerated().map { offset, id in
            var body = SampleBody.properties
            body["k"] = .int(Int64(all.count + offset))
            return DocumentUpdate(docID: id, body: body, mode: .edit(parent: nil))
        }
        try await fixture.saveBatch(updates)
    }
    var options = ViewEngine.Options(updatesInBackground: false)
    if let batch = ProcessInfo.processInfo.environment["SHOAL_VIEW_BATCH"].flatMap(Int.init) { options.batchSize = batch }
    let engine = ViewEngine(store: fixture.store, options: options)
    let index = try await engine.index(for: ViewDefinition(map: "function(doc) { emit(doc.k, null); }"), viewName: "v")
    print("view build starts, pid \(getpid())")
    fflush(nil)
    if let pause = ProcessInfo.processInfo.environment["SHOAL_PROFILE_PAUSE"], let seconds = Double(pause) {
        try await Task.sleep(for: .seconds(seconds))
    }
    var cpu = cpuSeconds()
    var start = ContinuousClock.now
    try await index.update()
    report("view build", docs: all.count, ContinuousClock.now - start)
    print(String(format: "view build CPU: %.2f s", cpuSeconds() - cpu))
    fflush(nil)
    if let pause = ProcessInfo.processInfo.environment["SHOAL_PROFILE_PAUSE"], let seconds = Double(pause) {
        try await Task.sleep(for: .seconds(seconds))
    }
    let raw = try RawSQLiteFixture(durability: .normal)
    cpu = cpuSeconds()
    start = ContinuousClock.now
    try await raw.insertBatch(ids: all, body: Data(SampleBody.canonicalBytes))
    report("raw insert", docs: all.count, ContinuousClock.now - start)
    print(String(format: "raw insert CPU: %.2f s", cpuSeconds() - cpu))
    raw.close()
    fixture.close()

case "store-single":
    let fixture = try StoreFixture(durability: durability(arguments.count > 2 ? arguments[2] : nil))
    var total = Duration.zero
    for i in 0..<count {
        let updates = StoreFixture.newDocuments(ids.next(size))
        let start = ContinuousClock.now
        for update in updates { _ = try await fixture.store.save(update) }
        let elapsed = ContinuousClock.now - start
        total += elapsed
        report("store single round \(i)", docs: size, elapsed)
    }
    report("store single total", docs: size * count, total)
    fixture.close()

case "raw-single":
    let fixture = try RawSQLiteFixture(durability: durability(arguments.count > 2 ? arguments[2] : nil))
    let body = Data(SampleBody.canonicalBytes)
    var total = Duration.zero
    for i in 0..<count {
        let batch = ids.next(size)
        let start = ContinuousClock.now
        for id in batch { try await fixture.insertSingle(id: id, body: body) }
        let elapsed = ContinuousClock.now - start
        total += elapsed
        report("raw single round \(i)", docs: size, elapsed)
    }
    report("raw single total", docs: size * count, total)
    fixture.close()

case "bulk-docs":
    QuietLogging.bootstrap()
    let perRequest = arguments.count > 4 ? Int(arguments[4]) ?? 1000 : 1000
    let directory = try TemporaryDirectory("profile-node")
    var configuration = NodeConfiguration()
    configuration.publicAddress = ListenAddress(host: "127.0.0.1", port: 0)
    configuration.adminAddress = ListenAddress(host: "127.0.0.1", port: 0)
    configuration.dataDirectory = directory.path
    var database = NodeConfiguration.Database(name: "db", durability: durability(arguments.count > 2 ? arguments[2] : nil))
    // SHOAL_PROFILE_SYNC: a sync function to run on every document (default: none).
    database.sync = ProcessInfo.processInfo.environment["SHOAL_PROFILE_SYNC"]
    configuration.databases = [database]
    configuration.discovery = false
    let node = try ShoalNode(configuration: configuration)
    let ports = try await node.start()
    let client = try await KeepAliveHTTPClient.connect(host: "127.0.0.1", port: ports.adminPort)
    let properties = SampleBody.canonicalBytes.dropFirst()
    var total = Duration.zero
    for i in 0..<count {
        var buffer = ByteBuffer()
        buffer.writeString(#"{"docs":["#)
        for (index, id) in ids.next(perRequest).enumerated() {
            if index > 0 { buffer.writeString(",") }
            buffer.writeString(#"{"_id":""# + id + #"","#)
            buffer.writeBytes(properties)
        }
        buffer.writeString("]}")
        let start = ContinuousClock.now
        let response = try await client.post("/db/_bulk_docs", json: buffer)
        let elapsed = ContinuousClock.now - start
        guard response.status == .created else { fatalError("\(response.status): \(response.bodyString)") }
        total += elapsed
        if i % 10 == 0 { report("bulk_docs request \(i)", docs: perRequest, elapsed) }
    }
    report("bulk_docs total", docs: perRequest * count, total)
    await client.close()
    await node.stop()
    directory.remove()

case "pull":
    QuietLogging.bootstrap()
    let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 1 : 1
    let docs = arguments.count > 3 ? Int(arguments[3]) ?? 20_000 : 20_000
    let source = try await BenchmarkNode.start("profile-source", durability: .normal)
    for _ in 0..<(docs / 5_000) {
        _ = try await source.store.save(batch: StoreFixture.newDocuments(ids.next(5_000)))
    }
    for round in 0..<rounds {
        let receiving = try await BenchmarkNode.start("profile-receiver", durability: .normal)
        let receiver = receiving.node, store = receiving.store
        let cpuBefore = processCPUSeconds()
        let start = ContinuousClock.now
        let replicator = await receiver.replications.start(
            ReplicationConfiguration(id: "profile", remote: "ws://127.0.0.1:\(source.ports.publicPort)/db",
                                     direction: .pull, continuous: false), store: store)
        await replicator.waitUntilFinished()
        let elapsed = ContinuousClock.now - start
        report("pull round \(round) (\(store.info().docCount) docs)", docs: docs, elapsed)
        print(String(format: "  CPU %.2f s = %.1f µs/doc, %.2f cores busy", processCPUSeconds() - cpuBefore,
                     (processCPUSeconds() - cpuBefore) * 1e6 / Double(docs), (processCPUSeconds() - cpuBefore) / seconds(elapsed)))
        await receiving.stop()
    }
    await source.stop()

case "steps":
    // The model work a new-document write does per document, step by step, outside SQLite.
    let n = arguments.count > 2 ? Int(arguments[2]) ?? 10_000 : 10_000
    let docIDs = ids.next(n)
    let body = SampleBody.properties
    func time(_ label: String, _ work: () throws -> Void) rethrows {
        let start = ContinuousClock.now
        try work()
        let elapsed = ContinuousClock.now - start
        let padded = label.padding(toLength: 52, withPad: " ", startingAt: 0)
        print(padded + String(format: " %8.2f µs/doc", seconds(elapsed) * 1e6 / Double(n)))
    }
    var updates: [DocumentUpdate] = []
    time("build DocumentUpdate") { updates = StoreFixture.newDocuments(docIDs) }
    time("DocumentStore.isValidDocID") { for id in docIDs { precondition(DocumentStore.isValidDocID(id)) } }
    time("RevisionBody.digestBody (digest view + canonical)") {
        for update in updates { blackHole(RevisionBody.digestBody(update.body)) }
    }
    let digestBody = RevisionBody.digestBody(body)
    time("RevID.compute (SHA-1 of 1 KB)") {
        for _ in docIDs { blackHole(RevID.compute(parent: nil, deleted: false, canonicalBody: digestBody)) }
    }
    time("JSON.object(body).canonicalBytes (stored body)") {
        for update in updates { blackHole(JSON.object(update.body).canonicalBytes()) }
    }
    let rev = RevID.compute(parent: nil, deleted: false, canonicalBody: digestBody)
    time("RevTree() + insert + serialized()") {
        for _ in docIDs {
            var tree = RevTree()
            try! tree.insert(rev, parent: nil, deleted: false, hasBody: true, sequence: 1)
            blackHole(tree.serialized())
        }
    }
    time("rev.description (winner column)") { for _ in docIDs { blackHole(rev.description) } }
    time("Data(bytes) copies of tree + body") {
        let bytes = SampleBody.canonicalBytes
        for _ in docIDs { blackHole(Data(bytes)) }
    }
    let request = {
        var out = Array(#"{"docs":["#.utf8)
        for (i, id) in docIDs.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out += Array(#"{"_id":""#.utf8) + Array(id.utf8) + Array(#"","#.utf8)
            out += SampleBody.canonicalBytes.dropFirst()
        }
        out += Array("]}".utf8)
        return out
    }()
    time("HTTP: JSON.parse of the _bulk_docs request") { blackHole(try! JSON.parse(request)) }
    let responseJSON = JSON.array(docIDs.map { ["id": .string($0), "rev": .string(rev.description)] })
    time("HTTP: encode the _bulk_docs response") { blackHole(responseJSON.canonicalBytes()) }

default:
    print("unknown mode \(mode)")
    exit(2)
}

/// User + system CPU time of this process so far.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6
}

@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
