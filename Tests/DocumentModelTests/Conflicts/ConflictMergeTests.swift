import Testing
@testable import DocumentModel

/// `merge`: n-way property merge against the merge base. Branches are given
/// different lengths so that their winner order is known: longer wins.
@Suite struct ConflictMergeTests {
    /// A root with `base`, and one branch per body; branch `i` has `count - i`
    /// edits, so branch 0 ranks first in winner order.
    private func scenario(base: JSON, branches: [JSON]) -> (ConflictScenario, RevID, [RevID]) {
        var doc = ConflictScenario()
        let root = doc.add(base, after: nil)
        let leaves = branches.enumerated().map { doc.edit($1, after: root, length: branches.count - $0) }
        return (doc, root, leaves)
    }

    private func merged(base: JSON, branches: [JSON], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: JSON]? {
        let (doc, _, leaves) = scenario(base: base, branches: branches)
        let tree = try doc.tree()
        #expect(tree.liveLeaves == leaves, sourceLocation: sourceLocation)
        let resolution = try doc.resolution(.merge, sourceLocation: sourceLocation)
        #expect(resolution.tombstones.map(\.parent) == Array(leaves.dropFirst()), sourceLocation: sourceLocation)
        if let result = resolution.result {
            #expect(result.parent == leaves[0], sourceLocation: sourceLocation)
            #expect(result.revID == expectedRevID(parent: leaves[0], deleted: false, body: result.body),
                    sourceLocation: sourceLocation)
            #expect(RevisionBody.digestBody(result.body) != RevisionBody.digestBody(doc.body(leaves[0])!),
                    sourceLocation: sourceLocation)
        }
        let after = try resolution.applied(to: tree)
        #expect(!after.hasConflict, sourceLocation: sourceLocation)
        #expect(after.winner == resolution.current, sourceLocation: sourceLocation)
        return doc.finalBody(resolution)
    }

    @Test func twoBranchesChangingDifferentProperties() throws {
        let result = try merged(base: ["a": 1, "b": 1, "c": 1],
                                branches: [["a": 2, "b": 1, "c": 1], ["a": 1, "b": 2, "c": 1, "d": 4]])
        #expect(result == ["a": 2, "b": 2, "c": 1, "d": 4])
    }

    @Test func sameChangeOnSeveralBranches() throws {
        #expect(try merged(base: ["a": 1], branches: [["a": 2, "x": 1], ["a": 2, "y": 1], ["a": 1.0]]) == ["a": 2, "x": 1, "y": 1])
        #expect(try merged(base: ["a": 1], branches: [["a": 1, "n": "s"], ["a": 1, "n": "s", "m": 1]]) == ["a": 1, "n": "s", "m": 1])
    }

    @Test func conflictingChangesGoToTheFirstBranchInWinnerOrder() throws {
        #expect(try merged(base: ["a": 1], branches: [["a": 2], ["a": 3]]) == ["a": 2])
        #expect(try merged(base: ["a": 1], branches: [["a": 1, "z": 0], ["a": 3], ["a": 4]]) == ["a": 3, "z": 0])
        // A kind change, a scalar against an object, an array against an array.
        #expect(try merged(base: ["a": 1], branches: [["a": "one"], ["a": ["x": 1]]]) == ["a": "one"])
        #expect(try merged(base: ["a": [1, 2]], branches: [["a": [1, 2, 3]], ["a": [0, 1, 2]]]) == ["a": [1, 2, 3]])
    }

    @Test func removals() throws {
        // Removed by one branch, unchanged by the others: removed.
        #expect(try merged(base: ["a": 1, "b": 1], branches: [["a": 1, "b": 1, "c": 1], ["b": 1], ["a": 1, "b": 1]]) == ["b": 1, "c": 1])
        // Removed by one, changed by another: the first in winner order.
        #expect(try merged(base: ["a": 1, "b": 1], branches: [["b": 1, "x": 1], ["a": 2, "b": 1]]) == ["b": 1, "x": 1])
        #expect(try merged(base: ["a": 1, "b": 1], branches: [["a": 2, "b": 1], ["b": 1, "x": 1]]) == ["a": 2, "b": 1, "x": 1])
        // null is a value, not a removal.
        #expect(try merged(base: ["a": 1], branches: [["a": nil, "x": 1], ["y": 1]]) == ["a": nil, "x": 1, "y": 1])
    }

    @Test func nestedObjectsMergeRecursively() throws {
        let base: JSON = ["profile": ["name": "Ann", "address": ["city": "Oslo", "zip": "0150"], "tags": ["a"]], "v": 1]
        let one: JSON = ["profile": ["name": "Anna", "address": ["city": "Oslo", "zip": "0151"], "tags": ["a"]], "v": 1]
        let two: JSON = ["profile": ["name": "Ann", "address": ["city": "Bergen", "zip": "0150", "floor": 2], "tags": ["b"]], "v": 1]
        let three: JSON = ["profile": ["name": "Ann", "address": ["city": "Oslo", "zip": "9999"], "tags": ["c"], "age": 40], "v": 2]
        let result = try merged(base: base, branches: [one, two, three])
        #expect(result == ["profile": ["name": "Anna", "address": ["city": "Bergen", "zip": "0151", "floor": 2],
                                       "tags": ["b"], "age": 40], "v": 2])
    }

    @Test func objectsAddedOnSeveralBranchesMerge() throws {
        #expect(try merged(base: ["a": 1], branches: [["a": 1, "meta": ["x": 1, "k": 1]], ["a": 1], ["a": 1, "meta": ["y": 2, "k": 2]]])
                == ["a": 1, "meta": ["x": 1, "y": 2, "k": 1]])
        // A base value that is not an object is replaced, not merged.
        #expect(try merged(base: ["m": "s"], branches: [["m": ["x": 1]], ["m": ["y": 1]]]) == ["m": ["x": 1]])
    }

    @Test func fiveBranches() throws {
        let base: JSON = ["type": "task", "name": "n", "count": 0, "done": false, "notes": ["a": 1]]
        let result = try merged(base: base, branches: [
            ["type": "task", "name": "n0", "count": 0, "done": false, "notes": ["a": 1]],
            ["type": "task", "name": "n1", "count": 1, "done": false, "notes": ["a": 1, "b": 1]],
            ["type": "task", "name": "n", "count": 2, "done": true, "notes": ["a": 1]],
            ["type": "task", "name": "n", "count": 0, "done": false, "notes": ["a": 2, "c": 3]],
            ["type": "task", "name": "n", "count": 0, "notes": ["a": 1]],
        ])
        // name: n0 beats n1; count: 1 beats 2; done: set by the third, removed by the
        // fifth, the third ranks first; notes: objects on both changing branches, merged.
        #expect(result == ["type": "task", "name": "n0", "count": 1, "done": true, "notes": ["a": 2, "b": 1, "c": 3]])
    }

    @Test func resultEqualToTheWinnerWritesNoChild() throws {
        // The loser re-saved the base body: nothing of it changes the winner.
        let (doc, _, leaves) = scenario(base: ["a": 1], branches: [["a": 2], ["a": 1]])
        let resolution = try doc.resolution(.merge)
        #expect(resolution.result == nil)
        #expect(resolution.tombstones.map(\.parent) == [leaves[1]])
        #expect(doc.finalBody(resolution) == ["a": 2])
    }

    @Test func needsTheMergeBaseBody() throws {
        let (doc, root, _) = scenario(base: ["a": 1], branches: [["a": 2], ["b": 1]])
        #expect(try doc.resolve(.merge, withBase: false) == .needsMergeBase(root))
        #expect(try doc.resolve(.js, withBase: false) == .needsMergeBase(root))
        #expect(try doc.resolve(.winner, withBase: false).resolution != nil)
        #expect(try doc.resolve(.lww(field: "a"), withBase: false).resolution != nil)
    }

    @Test func withoutCommonAncestorTheBaseIsEmpty() throws {
        var doc = ConflictScenario()
        let a = doc.edit(["x": 1, "shared": "a", "same": true], after: doc.add(["x": 0], after: nil))
        let b = doc.add(["y": 1, "shared": "b", "same": true], after: nil)
        let tree = try doc.tree()
        #expect(tree.mergeBase == nil)
        #expect(tree.liveLeaves == [a, b])
        let outcome = ConflictResolver.resolve(tree: tree, bodies: doc.bodies, mergeBaseBody: nil, policy: .merge)
        let resolution = try #require(outcome.resolution)
        #expect(resolution.mergeBase == nil)
        #expect(resolution.result?.body == ["x": 1, "y": 1, "shared": "a", "same": true])
    }

    @Test func reservedKeysInBodiesAreIgnored() throws {
        let merged = ConflictMerge.merge(base: ["a": 1, "_rev": "1-a"],
                                         branches: [["a": 2, "_id": "doc", "_rev": "2-b"], ["a": 1, "b": 1, "_deleted": false]])
        #expect(merged == ["a": 2, "b": 1])
    }
}
