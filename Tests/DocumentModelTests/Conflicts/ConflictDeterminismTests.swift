import Testing
import TestSupport
@testable import DocumentModel

/// Rule 1 and 3 of §4: the resolution depends only on the revisions, never on
/// the order in which they arrived, so every node writes byte-identical revisions.
@Suite struct ConflictDeterminismTests {
    static let policies: [ConflictPolicy] = [.winner, .deletesWin, .merge, .lww(field: "at"), .js]

    /// `live` live branches of mixed lengths off a shared history, plus, when
    /// `deleted`, one branch deleted since the merge base and one deleted before it.
    /// Branches overlap on some properties, nest objects, carry attachments, and
    /// some tie on `at`.
    static func scenario(live: Int, deleted: Bool) -> ConflictScenario {
        var doc = ConflictScenario()
        let root = doc.add(["type": "task", "name": "n", "at": "2024-01-01", "count": 0], after: nil)
        let base = doc.edit(["type": "task", "name": "n", "at": "2024-01-02", "count": 0, "meta": ["a": 1, "b": ["c": 1]],
                             "_attachments": ["a.txt": ["digest": "sha1-a", "length": 1, "revpos": 2, "content_type": "text/plain"]]],
                            after: root)
        if deleted {
            doc.delete(after: doc.edit(["type": "task", "name": "gone"], after: root))
            doc.delete(after: doc.edit(["type": "task", "name": "deleted", "at": "2099"], after: base))
        }
        for i in 0..<live {
            var body = doc.body(base)!
            body["count"] = .int(Int64(i))
            // The greatest `at` is on branches 1 and 4 (a tie), never on the longest branch 2.
            body["at"] = .string("2024-02-0\((i + 1) % 3)")
            if i % 2 == 0 { body["name"] = .string("name \(i)") }
            var meta = body["meta"]!.objectValue!
            meta["k\(i)"] = .int(Int64(i))
            if i == 1 { meta["b"] = ["c": 2, "d": 1] }
            if i == 2 { meta["a"] = nil }
            body["meta"] = .object(meta)
            var attachments = body["_attachments"]!.objectValue!
            attachments["f\(i % 2).png"] = ["digest": .string("sha1-\(i)"), "length": .int(Int64(i)), "revpos": 5]
            body["_attachments"] = .object(attachments)
            doc.edit(.object(body), after: base, length: 1 + (i * 7) % 3)
        }
        return doc
    }

    /// The resolution of every policy for `tree`, as comparable text.
    static func fingerprints(_ doc: ConflictScenario, tree: RevTree) throws -> [String] {
        var result = [String]()
        for policy in policies {
            let outcome = try doc.resolve(policy, script: SumScript(), tree: tree)
            let resolution = try #require(outcome.resolution, "\(policy): \(outcome)")
            result.append("\(policy): " + resolution.fingerprint.joined(separator: " | "))
        }
        return result
    }

    private func checkAllOrders(live: Int, deleted: Bool, orders: [[RevID]]) throws {
        let doc = Self.scenario(live: live, deleted: deleted)
        let reference = try Self.fingerprints(doc, tree: doc.tree())
        let referenceResolutions = try Self.policies.map { try doc.resolution($0, script: SumScript()) }
        #expect(referenceResolutions[1].deletesDocument == deleted)
        #expect(referenceResolutions[2].result != nil)   // merge writes a child
        if live >= 3 { #expect(referenceResolutions[3].result != nil) }   // lww picks a loser's body
        for order in orders {
            let tree = try doc.tree(arrivalOrder: order)
            #expect(try Self.fingerprints(doc, tree: tree) == reference)
            // Writing the resolution ends the conflict; another node's identical
            // resolution then adds nothing.
            for resolution in referenceResolutions {
                let after = try resolution.applied(to: tree)
                #expect(!after.hasConflict)
                var again = after
                for revision in resolution.revisions {
                    let added = try again.insert(history: [revision.revID, revision.parent], deleted: revision.deleted,
                                                 hasBody: true, sequence: 999)
                    #expect(added.added == 0)
                }
            }
        }
    }

    @Test(arguments: [(3, false), (4, false), (3, true), (2, true)])
    func everyArrivalOrderGivesTheSameResolution(live: Int, deleted: Bool) throws {
        let doc = Self.scenario(live: live, deleted: deleted)
        let leaves = doc.leaves
        #expect(leaves.count == live + (deleted ? 2 : 0))
        #expect(try doc.tree().liveLeaves.count == live)
        let orders = permutations(leaves)
        #expect(orders.count == (1...leaves.count).reduce(1, *))
        try checkAllOrders(live: live, deleted: deleted, orders: orders)
    }

    @Test(arguments: [false, true])
    func fiveBranchesInSeededRandomOrders(deleted: Bool) throws {
        let doc = Self.scenario(live: 5, deleted: deleted)
        var rng = SplitMix64(seed: deleted ? 0xC0FF_EE05 : 0x5EED_0005)
        let orders = (0..<40).map { _ in doc.leaves.shuffled(using: &rng) }
        try checkAllOrders(live: 5, deleted: deleted, orders: orders)
    }

    /// Revision-by-revision arrival (any parent-first order, not branch by branch).
    @Test func randomTopologicalInsertionOrders() throws {
        let doc = Self.scenario(live: 5, deleted: true)
        let reference = try Self.fingerprints(doc, tree: doc.tree())
        var rng = SplitMix64(seed: 42)
        for _ in 0..<30 {
            var pending = doc.revisions
            var tree = RevTree()
            var sequence: UInt64 = 0
            while !pending.isEmpty {
                let ready = pending.indices.filter { i in pending[i].parent.map(tree.contains) ?? true }
                let pick = pending.remove(at: ready.randomElement(using: &rng)!)
                sequence += 1
                try tree.insert(pick.rev, parent: pick.parent, deleted: pick.deleted, hasBody: true, sequence: sequence)
            }
            #expect(try Self.fingerprints(doc, tree: tree) == reference)
        }
    }

    /// The merged body is the same whatever order the bodies' keys were inserted in.
    @Test func mergeIgnoresDictionaryOrder() {
        var rng = SplitMix64(seed: 7)
        let base: [String: JSON] = ["a": 1, "b": ["x": 1, "y": 2], "c": "s"]
        let branches: [[String: JSON]] = [["a": 2, "b": ["x": 1, "y": 3], "c": "s"], ["a": 3, "b": ["x": 5, "y": 2], "c": "t", "d": 1], ["a": 1, "b": ["x": 1, "y": 2], "c": "s"]]
        let reference = JSON.object(ConflictMerge.merge(base: base, branches: branches)).canonicalBytes()
        #expect(String(decoding: reference, as: UTF8.self) == #"{"a":2,"b":{"x":5,"y":3},"c":"t","d":1}"#)
        for _ in 0..<20 {
            func rebuilt(_ o: [String: JSON]) -> [String: JSON] {
                var copy = [String: JSON]()
                for (k, v) in o.shuffled(using: &rng) { copy[k] = v }
                return copy
            }
            let merged = ConflictMerge.merge(base: rebuilt(base), branches: branches.map(rebuilt))
            #expect(JSON.object(merged).canonicalBytes() == reference)
        }
    }
}
