// mesh-settle-1k: five ShoalNodes in this process (loopback, file-backed,
// durability normal, policies: winner by default, merge for type "task").
//
// Setup of each iteration (not measured): node 1 creates 1000 task documents
// (SampleBody plus `name` and `complete`) and pushes them to nodes 2–5 (one-shot);
// partition {1,2} | {3,4,5}: node 1 renames every task, node 3 sets
// `complete: true` on every task, then each group syncs inside itself (one-shot
// pushAndPull from its first node).
//
// Measured: from starting the heal — a continuous pushAndPull replication from
// every node to the next one of a ring over all five — until every node holds
// the 1000 documents, none in conflict, with the same winner revision on all
// nodes (polled every 50 ms).
//
// Checked afterwards on every node: each winner is generation 3 with both edits
// (renamed and complete), and each tree has exactly 5 revisions (base, two edits,
// the merged child and one tombstone): no node wrote a resolution of its own.

import Benchmark
import BenchmarkSupport
import DocumentModel
import DocumentStore
import Foundation
import Replication
import ShoalNode

let meshNodeCount = 5
let meshDocumentCount = 1_000
let meshPolicies = ConflictPolicies(default: .winner, byType: ["task": .merge])
let settleTimeout = Duration.seconds(180)

let settleMilliseconds = BenchmarkMetric.custom("settle ms", polarity: .prefersSmaller, useScalingFactor: false)
let settleDocsPerSecond = BenchmarkMetric.custom("docs/s", polarity: .prefersLarger, useScalingFactor: false)
let resolutionsAllNodes = BenchmarkMetric.custom("resolutions (all nodes)", polarity: .prefersSmaller, useScalingFactor: false)
let revisionsWrittenAllNodes = BenchmarkMetric.custom("resolution revs written (all nodes)", polarity: .prefersSmaller,
                                                      useScalingFactor: false)
let failedAllNodes = BenchmarkMetric.custom("failed resolutions (all nodes)", polarity: .prefersSmaller, useScalingFactor: false)

func taskBody(_ index: Int) -> [String: JSON] {
    var body = SampleBody.properties
    body["type"] = "task"
    body["name"] = .string("Task \(index)")
    body["complete"] = false
    return body
}

func registerMeshSettle() {
    let metrics = [settleMilliseconds, settleDocsPerSecond, resolutionsAllNodes, revisionsWrittenAllNodes, failedAllNodes]
    Benchmark(
        "mesh-settle-1k (5 nodes)",
        configuration: .init(
            metrics: [.wallClock, .cpuTotal] + metrics,
            tags: ["nodes": String(meshNodeCount), "docs": String(meshDocumentCount), "policy": "merge"],
            timeUnits: .milliseconds,
            units: Dictionary(uniqueKeysWithValues: metrics.map { ($0, .count) }),
            warmupIterations: 0,
            scalingFactor: .one,
            maxDuration: .seconds(240),
            maxIterations: 2,
            thresholds: [settleMilliseconds: BenchmarkThresholds(relative: [.p50: 25.0])]
        )
    ) { benchmark in
        var nodes: [BenchmarkNode] = []
        do {
            for index in 1...meshNodeCount {
                nodes.append(try await BenchmarkNode.start("mesh\(index)", durability: .normal, conflicts: meshPolicies))
            }
            let elapsed = try await runMeshScenario(nodes, benchmark: benchmark)
            var resolved = 0, written = 0, failed = 0
            for node in nodes {
                guard let counters = node.node.conflictMonitor(database: "db")?.counters else {
                    throw BenchmarkFailure("a node has no conflict monitor for db")
                }
                resolved += counters.resolved
                written += counters.revisionsWritten
                failed += counters.failed
            }
            benchmark.measurement(settleMilliseconds, Int((microseconds(elapsed) / 1000).rounded()))
            benchmark.measurement(settleDocsPerSecond, ratePerSecond(meshDocumentCount, elapsed))
            benchmark.measurement(resolutionsAllNodes, resolved)
            benchmark.measurement(revisionsWrittenAllNodes, written)
            benchmark.measurement(failedAllNodes, failed)
        } catch {
            for node in nodes { await node.stop() }
            throw error
        }
        for node in nodes { await node.stop() }
    }
}

/// Seeds, partitions, edits and heals; returns the settle time.
func runMeshScenario(_ nodes: [BenchmarkNode], benchmark: Benchmark) async throws -> Duration {
    let first = nodes[0], third = nodes[2]
    // Seed: node 1 creates the tasks and pushes them to everyone.
    let ids = (0..<meshDocumentCount).map { String(format: "task-%04d", $0) }
    var revs: [String: RevID] = [:]
    let created = try await first.store.save(batch: ids.enumerated().map { index, id in
        DocumentUpdate(docID: id, body: taskBody(index), mode: .edit(parent: nil))
    })
    for result in created {
        let written = try result.get()
        revs[written.docID] = written.revID
    }
    for (index, node) in nodes.enumerated().dropFirst() {
        try await oneShot(first, to: node, id: "seed-\(index + 1)", direction: .push)
    }
    try await expectDocuments(nodes, phase: "seed")

    // Partition {1,2} | {3,4,5}: both sides edit every task, then sync inside their group.
    let renamed = try await first.store.save(batch: ids.enumerated().map { index, id in
        var body = taskBody(index)
        body["name"] = .string("Task \(index) (renamed)")
        return DocumentUpdate(docID: id, body: body, mode: .edit(parent: revs[id]!))
    })
    let completed = try await third.store.save(batch: ids.enumerated().map { index, id in
        var body = taskBody(index)
        body["complete"] = true
        return DocumentUpdate(docID: id, body: body, mode: .edit(parent: revs[id]!))
    })
    for result in renamed + completed { _ = try result.get() }
    try await oneShot(first, to: nodes[1], id: "group-2", direction: .pushAndPull)
    for index in 3..<meshNodeCount {
        try await oneShot(third, to: nodes[index], id: "group-\(index + 1)", direction: .pushAndPull)
    }
    let deadline = ContinuousClock.now + .seconds(30)
    for group in [Array(nodes[0..<2]), Array(nodes[2...])] {
        while true {
            let pictures = try await group.asyncMap { try await winners($0.store) }
            if pictures.allSatisfy({ $0.conflicted == 0 && $0.winners.count == meshDocumentCount
                    && $0.winners == pictures[0].winners && $0.winners.values.allSatisfy { $0.generation == 2 } }) {
                break
            }
            guard ContinuousClock.now < deadline else {
                throw BenchmarkFailure("partition: a group did not converge on its own edits before the heal")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    // Heal: a continuous pushAndPull ring over all nodes; measure until settled.
    benchmark.startMeasurement()
    let start = ContinuousClock.now
    for (index, node) in nodes.enumerated() {
        let next = nodes[(index + 1) % nodes.count]
        _ = await node.node.replications.start(
            ReplicationConfiguration(id: "heal", remote: "ws://127.0.0.1:\(next.ports.publicPort)/db",
                                     direction: .pushAndPull, continuous: true),
            store: node.store)
    }
    var pictures: [Picture] = []
    while true {
        pictures = try await nodes.asyncMap { try await winners($0.store) }
        if pictures.allSatisfy({ $0.conflicted == 0 && $0.winners.count == meshDocumentCount && $0.winners == pictures[0].winners }) {
            break
        }
        if ContinuousClock.now - start > settleTimeout {
            let summary = pictures.enumerated().map { "node \($0.offset + 1): \($0.element.conflicted) in conflict, \($0.element.winners.count) docs" }
            throw BenchmarkFailure("mesh did not settle in \(settleTimeout): \(summary.joined(separator: "; "))")
        }
        try await Task.sleep(for: .milliseconds(50))
    }
    let elapsed = ContinuousClock.now - start
    benchmark.stopMeasurement()
    try await checkSettled(nodes)
    return elapsed
}

/// Every document's winner, and how many documents are in conflict.
struct Picture: Equatable {
    var winners: [String: RevID] = [:]
    var conflicted = 0
}

func winners(_ store: DocumentStore) async throws -> Picture {
    var picture = Picture()
    for listing in try await store.changes(since: 0) {
        picture.winners[listing.docID] = listing.winner
        if listing.tree.hasConflict { picture.conflicted += 1 }
    }
    return picture
}

/// One-shot replication from `node` to `remote`; fails on a replication error.
func oneShot(_ node: BenchmarkNode, to remote: BenchmarkNode, id: String,
             direction: ReplicationConfiguration.Direction) async throws {
    let replicator = await node.node.replications.start(
        ReplicationConfiguration(id: id, remote: "ws://127.0.0.1:\(remote.ports.publicPort)/db",
                                 direction: direction, continuous: false),
        store: node.store)
    await replicator.waitUntilFinished()
    let status = replicator.status
    guard status.lastError == nil, status.docsFailedPush == 0, status.docsFailedPull == 0, status.state != .error else {
        throw BenchmarkFailure("replication \(id) failed: \(status)")
    }
}

/// Waits (up to 30 s) until every node has all the documents.
func expectDocuments(_ nodes: [BenchmarkNode], phase: String) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    for (index, node) in nodes.enumerated() {
        while node.store.info().docCount != meshDocumentCount {
            guard ContinuousClock.now < deadline else {
                throw BenchmarkFailure("\(phase): node \(index + 1) has \(node.store.info().docCount) documents, expected \(meshDocumentCount)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// After settling: on every node each winner is the merge (generation 3, renamed
/// and complete) and each tree holds exactly the 5 expected revisions.
func checkSettled(_ nodes: [BenchmarkNode]) async throws {
    for (index, node) in nodes.enumerated() {
        let listings = try await node.store.changes(since: 0, includeBodies: true)
        var wrongBody = 0, extraRevisions = 0, wrongGeneration = 0
        for listing in listings {
            let number = Int(listing.docID.dropFirst("task-".count))!
            var expected = taskBody(number)
            expected["name"] = .string("Task \(number) (renamed)")
            expected["complete"] = true
            if listing.body != expected { wrongBody += 1 }
            if listing.winner.generation != 3 { wrongGeneration += 1 }
            if listing.tree.count != 5 || listing.tree.leaves.count != 2 { extraRevisions += 1 }
        }
        guard listings.count == meshDocumentCount, wrongBody == 0, wrongGeneration == 0, extraRevisions == 0 else {
            throw BenchmarkFailure("""
                node \(index + 1) after settling: \(listings.count) documents, \(wrongBody) without both edits, \
                \(wrongGeneration) winners not at generation 3, \(extraRevisions) trees not exactly base + 2 edits + merge + tombstone
                """)
        }
    }
}

extension Array where Element: Sendable {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        result.reserveCapacity(count)
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
