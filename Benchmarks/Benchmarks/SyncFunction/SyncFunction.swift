// The cost of access control (issue: security).
//
// sync-vs-default: `_bulk_docs` (5 requests × 1000 new 1 KB documents per iteration,
// one keep-alive connection to the public port, HTTP Basic as user `writer`) into a
// node whose database has a non-trivial JavaScript sync function (type validation,
// requireUser on the owner, routing to a per-list channel, an access() grant), and the
// same into a node with no sync function configured (Sync Gateway's default routing,
// applied natively), in the same iteration, alternating which goes first.
// Reports docs/s of both and the ratio (target ≥ 50%).
//
// user-pull-10pct: a source node holds 20 000 documents of 1 KB, 10% of them in the
// channel `mine`; a fresh node pulls one-shot over BLIP as a user who reads only
// `mine` (2 000 documents), and, in the same iteration, another fresh node pulls
// everything as an administrator would (mesh-style, no credentials on the admin
// port). Reports the user's pulled docs/s and the time of both pulls.

import Benchmark
import BenchmarkSupport
import DocumentModel
import DocumentStore
import Foundation
import NIOCore
import ShoalNode

let docsPerRequest = 1_000
let requestsPerIteration = 5
let writerAuth = ("Authorization", "Basic " + Data("writer:secret".utf8).base64EncodedString())

let syncSource = """
    function(doc, oldDoc) {
      if (!doc.type) throw({forbidden: "type is not provided."});
      if (oldDoc && oldDoc.type != doc.type) throw({forbidden: "type is read-only."});
      var owner = doc._deleted ? oldDoc.owner : doc.owner;
      requireUser(owner);
      if (doc.type == "task") {
        channel("list." + doc.list);
        access(owner, "list." + doc.list);
      }
    }
    """

let defaultDocsPerSecond = BenchmarkMetric.custom("default docs/s", polarity: .prefersLarger, useScalingFactor: false)
let syncDocsPerSecond = BenchmarkMetric.custom("sync docs/s", polarity: .prefersLarger, useScalingFactor: false)
let syncPercent = BenchmarkMetric.custom("sync % of default", polarity: .prefersLarger, useScalingFactor: false)
let userDocsPerSecond = BenchmarkMetric.custom("user pull docs/s", polarity: .prefersLarger, useScalingFactor: false)
let userPullMs = BenchmarkMetric.custom("user pull ms (2k of 20k)", polarity: .prefersSmaller, useScalingFactor: false)
let fullPullMs = BenchmarkMetric.custom("full pull ms (20k)", polarity: .prefersSmaller, useScalingFactor: false)

/// `{"docs":[{"_id":…, "type":"task", "owner":"writer", "list":"l<i mod 10>", <sample body>}, …]}`.
func requestBody(ids: [String]) -> ByteBuffer {
    let properties = SampleBody.canonicalBytes.dropFirst()
    var buffer = ByteBuffer()
    buffer.writeString(#"{"docs":["#)
    for (index, id) in ids.enumerated() {
        if index > 0 { buffer.writeString(",") }
        buffer.writeString(#"{"_id":""# + id + #"","type":"task","owner":"writer","list":"l\#(index % 10)","#)
        buffer.writeBytes(properties)
    }
    buffer.writeString("]}")
    return buffer
}

func checkBulk(_ response: KeepAliveHTTPClient.Response) throws {
    guard response.status == .created, let results = try JSON.parse(Array(response.body.readableBytesView)).arrayValue,
          results.count == docsPerRequest, !results.contains(where: { $0["error"] != nil })
    else { throw BenchmarkFailure("_bulk_docs failed: \(response.status) \(response.bodyString.prefix(300))") }
}

final class WriteFixture: Sendable {
    let plain: BenchmarkNode, scripted: BenchmarkNode
    let plainClient: KeepAliveHTTPClient, scriptedClient: KeepAliveHTTPClient

    init(plain: BenchmarkNode, scripted: BenchmarkNode, plainClient: KeepAliveHTTPClient, scriptedClient: KeepAliveHTTPClient) {
        (self.plain, self.scripted, self.plainClient, self.scriptedClient) = (plain, scripted, plainClient, scriptedClient)
    }

    static func start() async throws -> WriteFixture {
        let users: [String: JSON] = ["writer": ["password": "secret", "admin_channels": ["*"]]]
        let plain = try await BenchmarkNode.start("sync-default", durability: .normal) { $0.users = users }
        let scripted = try await BenchmarkNode.start("sync-js", durability: .normal) { database in
            database.users = users
            database.sync = syncSource
        }
        return WriteFixture(
            plain: plain, scripted: scripted,
            plainClient: try await KeepAliveHTTPClient.connect(host: "127.0.0.1", port: plain.ports.publicPort),
            scriptedClient: try await KeepAliveHTTPClient.connect(host: "127.0.0.1", port: scripted.ports.publicPort))
    }

    func stop() async {
        await plainClient.close()
        await scriptedClient.close()
        await plain.stop()
        await scripted.stop()
    }
}

/// Sends the bodies; returns the elapsed time.
func post(_ bodies: [ByteBuffer], _ client: KeepAliveHTTPClient) async throws -> Duration {
    let start = ContinuousClock.now
    var responses: [KeepAliveHTTPClient.Response] = []
    for body in bodies { responses.append(try await client.request(.POST, "/db/_bulk_docs", body: body, headers: [writerAuth])) }
    let elapsed = ContinuousClock.now - start
    for response in responses { try checkBulk(response) }
    return elapsed
}

final class PullFixture: Sendable {
    let source: BenchmarkNode
    init(source: BenchmarkNode) { self.source = source }

    static let total = 20_000

    static func start(ids: inout DocumentIDGenerator) async throws -> PullFixture {
        let source = try await BenchmarkNode.start("pull-source", durability: .normal) { database in
            database.users = ["reader": ["password": "secret", "admin_channels": ["mine"]]]
        }
        var updates: [DocumentUpdate] = []
        for index in 0..<total {
            var body = SampleBody.properties
            body["channels"] = index % 10 == 0 ? ["mine"] : ["other"]
            updates.append(DocumentUpdate(docID: ids.next(), body: body, mode: .edit(parent: nil)))
        }
        for chunk in stride(from: 0, to: updates.count, by: 5000) {
            for result in try await source.store.save(batch: Array(updates[chunk..<min(chunk + 5000, updates.count)])) {
                _ = try result.get()
            }
        }
        return PullFixture(source: source)
    }

    /// A fresh node pulls one-shot from the source (as `reader`, or with no credentials
    /// through the admin port); returns the elapsed time and the documents it holds.
    func pull(asReader: Bool) async throws -> (Duration, Int) {
        let target = try await BenchmarkNode.start("pull-target", durability: .normal, inMemory: true) { _ in }
        defer { Task { await target.stop() } }
        let port = asReader ? source.ports.publicPort : source.ports.adminPort
        var definition: [String: JSON] = ["remote": .string("ws://127.0.0.1:\(port)/db"), "direction": "pull"]
        if asReader {
            definition["remote_username"] = "reader"
            definition["remote_password"] = "secret"
        }
        let start = ContinuousClock.now
        try await target.node.putReplication(database: "db", id: "p", definition: definition.mapValues { $0 })
        while target.node.replicationStatuses(database: "db")["p"]?["status"]?.stringValue != "stopped" {
            if ContinuousClock.now - start > .seconds(300) { throw BenchmarkFailure("pull did not finish") }
            try await Task.sleep(for: .milliseconds(5))
        }
        let elapsed = ContinuousClock.now - start
        if target.store.info().docCount == 0 {
            throw BenchmarkFailure("pulled nothing; replication status: \(target.node.replicationStatuses(database: "db")["p"] ?? .null)")
        }
        return (elapsed, target.store.info().docCount)
    }

    func stop() async { await source.stop() }
}

func milliseconds(_ duration: Duration) -> Int {
    Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
}

let benchmarks: @Sendable () -> Void = {
    QuietLogging.bootstrap()

    let writes = BenchmarkState<WriteFixture>(seed: 0x5EC0_0001)
    Benchmark(
        "sync-vs-default",
        configuration: .init(
            metrics: [.wallClock, defaultDocsPerSecond, syncDocsPerSecond, syncPercent],
            tags: ["docs": String(docsPerRequest * requestsPerIteration)],
            timeUnits: .milliseconds, units: [defaultDocsPerSecond: .count, syncDocsPerSecond: .count, syncPercent: .count],
            warmupIterations: 1, scalingFactor: .one, maxDuration: .seconds(20), maxIterations: 12)
    ) { benchmark in
        let fixture = writes.current
        writes.iteration += 1
        let plainBodies = (0..<requestsPerIteration).map { _ in requestBody(ids: writes.ids.next(docsPerRequest)) }
        let scriptedBodies = (0..<requestsPerIteration).map { _ in requestBody(ids: writes.ids.next(docsPerRequest)) }
        var plain = Duration.zero, scripted = Duration.zero
        if writes.iteration % 2 == 0 {
            plain = try await post(plainBodies, fixture.plainClient)
            scripted = try await post(scriptedBodies, fixture.scriptedClient)
        } else {
            scripted = try await post(scriptedBodies, fixture.scriptedClient)
            plain = try await post(plainBodies, fixture.plainClient)
        }
        let count = docsPerRequest * requestsPerIteration
        let plainRate = ratePerSecond(count, plain), scriptedRate = ratePerSecond(count, scripted)
        benchmark.measurement(defaultDocsPerSecond, plainRate)
        benchmark.measurement(syncDocsPerSecond, scriptedRate)
        benchmark.measurement(syncPercent, plainRate > 0 ? scriptedRate * 100 / plainRate : 0)
    } setup: {
        writes.fixture = try await WriteFixture.start()
    } teardown: {
        await writes.fixture?.stop()
        writes.fixture = nil
    }

    let pulls = BenchmarkState<PullFixture>(seed: 0x5EC0_0002)
    Benchmark(
        "user-pull-10pct",
        configuration: .init(
            metrics: [.wallClock, userDocsPerSecond, userPullMs, fullPullMs],
            timeUnits: .milliseconds, units: [userDocsPerSecond: .count, userPullMs: .count, fullPullMs: .count],
            warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(60), maxIterations: 4)
    ) { benchmark in
        let fixture = pulls.current
        let (userElapsed, userDocs) = try await fixture.pull(asReader: true)
        let (fullElapsed, allDocs) = try await fixture.pull(asReader: false)
        guard userDocs == PullFixture.total / 10, allDocs == PullFixture.total else {
            throw BenchmarkFailure("pulled \(userDocs) as the user (expected \(PullFixture.total / 10)), \(allDocs) in full")
        }
        benchmark.measurement(userDocsPerSecond, ratePerSecond(userDocs, userElapsed))
        benchmark.measurement(userPullMs, milliseconds(userElapsed))
        benchmark.measurement(fullPullMs, milliseconds(fullElapsed))
    } setup: {
        pulls.fixture = try await PullFixture.start(ids: &pulls.ids)
    } teardown: {
        await pulls.fixture?.stop()
        pulls.fixture = nil
    }
}
