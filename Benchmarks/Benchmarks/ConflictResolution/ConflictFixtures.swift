// The conflicted documents of the model and store benchmarks: a merge base
// (generation 1, the 1 KB SampleBody) and `branchCount` live children
// (generation 2). Branch i rewrites one existing property of its own, adds one
// property of its own and sets the shared `updated_at` to its own value, so
// the merge has `2 × branchCount` disjoint changes to take plus one property
// changed differently by every branch (rule 4: the first branch in winner
// order wins it).

import BenchmarkSupport
import DocumentModel
import DocumentStore
import Foundation

struct ConflictCase: Sendable {
    let branchCount: Int
    let base: [String: JSON]
    let baseRev: RevID
    /// Branch leaves in the order they were made (not winner order).
    let branchRevs: [RevID]
    /// Base and every branch body, by revision.
    let bodies: [RevID: [String: JSON]]
    /// Base plus the branches, as the store holds it after replication.
    let tree: RevTree
    /// The merge result, computed here independently of ConflictMerge.
    let expectedMerge: [String: JSON]

    static let sharedKey = "updated_at"

    /// SampleBody properties a branch may rewrite (one each): all but `type` and the shared one.
    static let ownKeys: [String] = SampleBody.properties.keys
        .filter { $0 != "type" && $0 != sharedKey }
        .sorted()

    init(branchCount: Int) {
        precondition(branchCount >= 2 && branchCount <= Self.ownKeys.count)
        self.branchCount = branchCount
        let base = SampleBody.properties
        let baseRev = RevID.compute(parent: nil, deleted: false, canonicalBody: RevisionBody.digestBody(base))
        var tree = RevTree()
        try! tree.insert(baseRev, parent: nil, deleted: false, hasBody: true, sequence: 1)
        var bodies = [baseRev: base]
        var branchRevs: [RevID] = []
        var changes: [String: JSON] = [:]
        for branch in 0..<branchCount {
            var body = base
            let own = Self.ownKeys[branch]
            body[own] = Self.rewritten(base[own]!, branch: branch)
            body["branch_\(branch)_note"] = .string("added on branch \(branch) while partitioned")
            body[Self.sharedKey] = .string("2026-11-22T10:00:\(String(format: "%02d", branch)).000Z")
            changes[own] = body[own]
            changes["branch_\(branch)_note"] = body["branch_\(branch)_note"]
            let rev = RevID.compute(parent: baseRev, deleted: false, canonicalBody: RevisionBody.digestBody(body))
            try! tree.insert(rev, parent: baseRev, deleted: false, hasBody: true, sequence: UInt64(2 + branch))
            bodies[rev] = body
            branchRevs.append(rev)
        }
        precondition(tree.liveLeaves.count == branchCount && tree.mergeBase == baseRev)
        var expected = base
        for (key, value) in changes { expected[key] = value }
        expected[Self.sharedKey] = bodies[tree.liveLeaves[0]]![Self.sharedKey]
        self.base = base
        self.baseRev = baseRev
        self.branchRevs = branchRevs
        self.bodies = bodies
        self.tree = tree
        expectedMerge = expected
    }

    /// A different value of the same kind.
    static func rewritten(_ value: JSON, branch: Int) -> JSON {
        switch value {
        case .string(let s): .string(s + " (edited on branch \(branch))")
        case .int(let n): .int(n + Int64(branch) + 1)
        case .double(let d): .double(d + Double(branch) + 1)
        default: .string("edited on branch \(branch)")
        }
    }

    /// The live leaves' bodies (what the resolver is given).
    var leafBodies: [RevID: [String: JSON]] { bodies.filter { $0.key != baseRev } }

    /// The store updates that create one such conflicted document: the base with
    /// its body, then each branch as a replicated revision on top of it.
    func updates(docID: String) -> [DocumentUpdate] {
        [DocumentUpdate(docID: docID, body: base, mode: .replicate(history: [baseRev]))]
            + branchRevs.map { rev in
                DocumentUpdate(docID: docID, body: bodies[rev]!, mode: .replicate(history: [rev, baseRev]))
            }
    }

    /// Checks what the resolver decided for this case: for `merge`, a child of the
    /// winning leaf holding `expectedMerge` plus a tombstone per other leaf; for
    /// `winner`, the tombstones only.
    func check(_ outcome: ConflictOutcome, policy: ConflictPolicy) throws {
        guard case .resolved(let resolution) = outcome else {
            throw BenchmarkFailure("\(policy), \(branchCount) branches: expected a resolution, got \(outcome)")
        }
        let leaves = tree.liveLeaves
        guard resolution.winningLeaf == leaves[0], resolution.mergeBase == baseRev,
              resolution.tombstones.map(\.parent) == Array(leaves.dropFirst()),
              resolution.tombstones.allSatisfy({ $0.deleted && $0.body.isEmpty }) else {
            throw BenchmarkFailure("\(policy), \(branchCount) branches: wrong tombstones or winning leaf: \(resolution)")
        }
        switch policy {
        case .merge:
            guard let result = resolution.result, !result.deleted, result.parent == leaves[0],
                  result.body == expectedMerge else {
                throw BenchmarkFailure("merge, \(branchCount) branches: merged body is not base + every branch's changes")
            }
        default:
            guard resolution.result == nil else {
                throw BenchmarkFailure("\(policy), \(branchCount) branches: unexpected result revision")
            }
        }
    }
}

/// A file-backed store (durability normal) loaded with conflicted documents, each
/// resolved once by an iteration, and the raw SQLite baseline of the same run.
final class StoreResolveState: @unchecked Sendable {
    let conflict: ConflictCase
    var store: StoreFixture?
    var raw: RawSQLiteFixture?
    /// Conflicted documents not resolved yet, in the order iterations take them.
    var pending: [String] = []
    var rawIDs = DocumentIDGenerator(seed: 0x5EED_C0F1)
    var iteration = 0

    init(branchCount: Int) {
        conflict = ConflictCase(branchCount: branchCount)
    }

    /// Creates `count` conflicted documents (two batches: bases, then branches) and
    /// checks that each has `branchCount` live leaves.
    func prepare(count: Int) async throws {
        let fixture = try StoreFixture(durability: .normal)
        store = fixture
        raw = try RawSQLiteFixture(durability: .normal)
        var ids = DocumentIDGenerator(seed: 0x5EED_C0F0 &+ UInt64(conflict.branchCount))
        pending = ids.next(count)
        let perChunk = max(1, 2_000 / (conflict.branchCount + 1))
        for start in stride(from: 0, to: pending.count, by: perChunk) {
            let chunk = pending[start..<min(start + perChunk, pending.count)]
            let all = chunk.map { conflict.updates(docID: $0) }
            for updates in [all.map { $0[0] }, all.flatMap { $0.dropFirst() }] {
                for result in try await fixture.store.save(batch: updates) {
                    _ = try result.get()
                }
            }
        }
        let listings = try await fixture.store.changes(since: 0)
        let conflicted = listings.filter { $0.tree.liveLeaves.count == conflict.branchCount }.count
        guard listings.count == count, conflicted == count else {
            throw BenchmarkFailure("setup: \(listings.count) documents, \(conflicted) with \(conflict.branchCount) live leaves, expected \(count)")
        }
    }

    func next(_ count: Int) throws -> [String] {
        guard pending.count >= count else {
            throw BenchmarkFailure("setup prepared too few conflicted documents (more iterations than planned)")
        }
        defer { pending.removeFirst(count) }
        return Array(pending.prefix(count))
    }

    /// After the iteration: each document has one live leaf, generation 3, with the
    /// merged body, and `branchCount` leaves in all (the merged child and the tombstones).
    func verify(_ docIDs: [String]) async throws {
        let store = store!.store
        for docID in docIDs {
            let (metadata, revision) = try await store.revision(docID)
            let tree = metadata.tree
            guard !tree.hasConflict, tree.leaves.count == conflict.branchCount, revision.revID.generation == 3,
                  revision.body == conflict.expectedMerge else {
                throw BenchmarkFailure("\(docID) after resolve: \(tree.leaves.count) leaves, \(tree.liveLeaves.count) live, winner \(revision.revID), merged body \(revision.body == conflict.expectedMerge ? "right" : "wrong")")
            }
        }
    }

    func close() {
        store?.close()
        raw?.close()
        store = nil
        raw = nil
    }
}
