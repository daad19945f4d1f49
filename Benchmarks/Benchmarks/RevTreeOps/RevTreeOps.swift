// Pure DocumentModel costs (no I/O): revision-tree operations on a large, conflicted
// tree, and the per-revision work of a write (canonical JSON, parse, SHA-1, new RevID).
//
// The tree: a trunk of 1000 generations (1-… to 1000-…) plus 10 conflicting live
// branches of 20 generations each, forking from the trunk at generations 500, 550,
// …, 950. 1200 revisions, 11 live leaves.
//
// All benchmarks run 1000 inner iterations (scalingFactor .kilo): the times shown
// (marked *) are per operation.

import Benchmark
import BenchmarkSupport
import DocumentModel
import DocumentStore
import Foundation

func digest(_ label: String) -> String {
    Digests.hex(SHA1.hash(Array(label.utf8)))
}

struct TreeFixture: Sendable {
    var tree = RevTree()
    var trunk: [RevID] = []          // trunk[g - 1] is generation g
    var branchLeaves: [RevID] = []

    static let trunkLength = 1000
    static let branchCount = 10
    static let branchLength = 20

    init() {
        var sequence: UInt64 = 0
        var parent: RevID?
        for generation in 1...Self.trunkLength {
            let rev = RevID(generation: generation, digest: digest("trunk-\(generation)"))
            sequence += 1
            try! tree.insert(rev, parent: parent, deleted: false, hasBody: generation == Self.trunkLength,
                             sequence: sequence)
            trunk.append(rev)
            parent = rev
        }
        for branch in 0..<Self.branchCount {
            var parent = trunk[500 + 50 * branch - 1]
            for step in 1...Self.branchLength {
                let rev = RevID(generation: parent.generation + 1, digest: digest("branch-\(branch)-\(step)"))
                sequence += 1
                try! tree.insert(rev, parent: parent, deleted: false, hasBody: step == Self.branchLength,
                                 sequence: sequence)
                parent = rev
            }
            branchLeaves.append(parent)
        }
        precondition(tree.count == Self.trunkLength + Self.branchCount * Self.branchLength)
        precondition(tree.liveLeaves.count == Self.branchCount + 1)
    }

    /// A replicated history of 1000 revisions whose newest is one generation after the
    /// trunk's leaf: one new revision, 999 known.
    var historyExtendingTrunk: [RevID] {
        [RevID(generation: Self.trunkLength + 1, digest: digest("remote-extend"))]
            + trunk.suffix(Self.trunkLength - 1).reversed()
    }

    /// A replicated history of 1000 revisions forking from the trunk at generation 500:
    /// 500 new revisions (501…1000), then trunk 500…1.
    var historyForkingAt500: [RevID] {
        (501...1000).reversed().map { RevID(generation: $0, digest: digest("remote-fork-\($0)")) }
            + trunk.prefix(500).reversed()
    }
}

/// Flags a change of the median (p50) of more than 25% when comparing baselines
/// (`swift package benchmark baseline check`); shared 2-core machines are noisy.
var medianWithin25Percent: BenchmarkThresholds { BenchmarkThresholds(relative: [.p50: 25.0]) }

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock],
        timeUnits: .nanoseconds,
        warmupIterations: 3,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 1000,
        thresholds: [.wallClock: medianWithin25Percent, .throughput: medianWithin25Percent]
    )

    let fixture = TreeFixture()
    let tree = fixture.tree

    // MARK: Revision tree

    // What a normal edit does to a loaded tree: copy (the store mutates its own copy)
    // and append one leaf onto a branch.
    let branchLeaf = fixture.branchLeaves[5]
    let newLeaf = RevID(generation: branchLeaf.generation + 1, digest: digest("new-leaf"))
    Benchmark("revtree-insert-leaf (copy + insert)") { benchmark in
        for _ in benchmark.scaledIterations {
            var copy = tree
            try copy.insert(newLeaf, parent: branchLeaf, deleted: false, hasBody: true, sequence: 10_000)
            blackHole(copy)
        }
    }

    // The copy alone, to separate the copy-on-write cost from the insert.
    Benchmark("revtree-copy (reference for insert-leaf)") { benchmark in
        for _ in benchmark.scaledIterations {
            var copy = tree
            copy.setHasBody(branchLeaf, true)   // forces the copy
            blackHole(copy)
        }
    }

    Benchmark("revtree-winner") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(tree.winner)
        }
    }

    Benchmark("revtree-mergeBase (11 live leaves)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(tree.mergeBase)
        }
    }

    let extending = fixture.historyExtendingTrunk
    precondition(extending.count == 1000)
    Benchmark("revtree-insert-history-1000 (1 new rev)") { benchmark in
        for _ in benchmark.scaledIterations {
            var copy = tree
            let added = try copy.insert(history: extending, deleted: false, hasBody: true, sequence: 10_000).added
            precondition(added == 1)
            blackHole(copy)
        }
    }

    let forking = fixture.historyForkingAt500
    precondition(forking.count == 1000)
    Benchmark("revtree-insert-history-1000 (fork, 500 new revs)") { benchmark in
        for _ in benchmark.scaledIterations {
            var copy = tree
            let added = try copy.insert(history: forking, deleted: false, hasBody: true, sequence: 10_000).added
            precondition(added == 500)
            blackHole(copy)
        }
    }

    // First arrival of a replicated document with a full 1000-generation history.
    Benchmark("revtree-insert-history-1000 (empty tree)") { benchmark in
        for _ in benchmark.scaledIterations {
            var fresh = RevTree()
            try fresh.insert(history: extending, deleted: false, hasBody: true, sequence: 1)
            blackHole(fresh)
        }
    }

    let serialized = tree.serialized()
    Benchmark("revtree-serialized (\(serialized.count) bytes)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(tree.serialized())
        }
    }

    Benchmark("revtree-init(serialized:)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try RevTree(serialized: serialized))
        }
    }

    Benchmark("revtree-serialize-roundtrip") { benchmark in
        for _ in benchmark.scaledIterations {
            let decoded = try RevTree(serialized: tree.serialized())
            blackHole(decoded)
        }
    }

    // MARK: Per-revision work of a write, 1 KB body

    let body = SampleBody.properties
    let bodyJSON = JSON.object(body)
    let bodyBytes = SampleBody.canonicalBytes
    precondition(bodyBytes.count == 1024)

    Benchmark("json-canonical-encode-1KB") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(bodyJSON.canonicalBytes())
        }
    }

    Benchmark("json-parse-1KB") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try JSON.parse(bodyBytes))
        }
    }

    // What a pull does with a replicated body: validate its canonical bytes, no values built.
    Benchmark("json-scan-canonical-1KB (ObjectBody)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(ObjectBody(canonical: bodyBytes))
        }
    }

    // Baseline for the parser: Foundation's JSONSerialization on the same bytes.
    let bodyData = Data(bodyBytes)
    Benchmark("foundation-JSONSerialization-parse-1KB (baseline)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try JSONSerialization.jsonObject(with: bodyData))
        }
    }

    Benchmark("sha1-1KB") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(SHA1.hash(bodyBytes))
        }
    }

    // What the store hashes with (swift-crypto: the CPU's SHA instructions), against the above.
    Benchmark("sha1-1KB-crypto (store)") { benchmark in
        for _ in benchmark.scaledIterations {
            var sha = CryptoSHA1()
            bodyBytes.withUnsafeBytes { sha.update($0) }
            blackHole(sha.finalize())
        }
    }

    // What a new edit computes: the digest view's canonical bytes, then SHA-1 → RevID.
    let parent = fixture.trunk.last!
    Benchmark("revid-compute-1KB (digestBody + SHA-1)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(RevID.compute(parent: parent, deleted: false, canonicalBody: RevisionBody.digestBody(body)))
        }
    }

    Benchmark("revid-compute-1KB-crypto (store)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(RevID.compute(
                parent: parent, deleted: false, canonicalBody: RevisionBody.digestBody(body), using: CryptoSHA1.self))
        }
    }

    // MARK: Version vectors (Couchbase Lite 4)

    // A vector as a busy document has it: a current version, one merge, six previous
    // versions of other writers; and the `rev` message form Couchbase Lite 4 sends.
    let sources = (1...8).map { SourceID(high: UInt64($0) &* 0x9e37_79b9_7f4a_7c15, low: UInt64($0)) }
    let baseTime: UInt64 = 0x18ec_2ac8_66c3_0000
    let busy = try! VersionVector(
        current: Version(time: baseTime + 0x80000, source: sources[0]),
        merges: [Version(time: baseTime + 0x70000, source: sources[1])],
        previous: (2..<8).map { Version(time: baseTime + UInt64($0) * 0x10000, source: sources[$0]) })
    let edited = try! busy.addingLocalEdit(source: sources[3], time: baseTime + 0x90000)
    let revProperty = edited.current.description
    let historyProperty = edited.historyText()
    Benchmark("versionvector-compare (8 sources)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(edited.compare(to: busy))
        }
    }

    Benchmark("versionvector-parse-rev (rev + history, 8 sources)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try! VersionVector.parseRevMessage(rev: revProperty, history: historyProperty))
        }
    }

    // What a mesh link's `rev` carries for a document written once (`shoal-vv`): one version.
    let oneVersion = VersionVector(Version(time: baseTime, source: sources[0])).text(style: .syncGateway)
    Benchmark("versionvector-parse-one (shoal-vv of a new document)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try! VersionVector(parsing: oneVersion))
        }
    }

    Benchmark("versionvector-text (8 sources)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(edited.text(style: .syncGateway))
        }
    }
}
