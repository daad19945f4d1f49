import Testing
import TestSupport
@testable import DocumentModel

/// Property-based tests: winner, leaves and conflicts depend only on the set of
/// revisions, never on the order in which they arrived.
@Suite(.ownThread) struct RevTreePropertyTests {
    private func checkAgainstReference(_ tree: RevTree, _ ref: ReferenceTree) {
        let expected = ref.expectedLeaves
        #expect(tree.leaves == expected)
        #expect(tree.winner == expected.first)
        let live = ref.leafIndices.filter { !ref.nodes[$0].deleted }
        #expect(tree.liveLeaves.count == live.count)
        #expect(tree.hasConflict == (live.count > 1))
        #expect(tree.isDeleted == live.isEmpty)
        for i in ref.leafIndices { #expect(tree.isLeaf(ref.nodes[i].rev)) }
    }

    /// Brute-force latest common ancestor of some nodes of a reference tree.
    private func bruteCommonAncestor(_ ref: ReferenceTree, _ members: [Int]) -> RevID? {
        guard let first = members.first else { return nil }
        let paths = members.map { Set(ref.path(from: $0)) }
        for candidate in ref.path(from: first) where paths.allSatisfy({ $0.contains(candidate) }) {
            return ref.nodes[candidate].rev
        }
        return nil
    }

    @Test func winnerIndependentOfInsertionOrder() throws {
        var rng = SplitMix64(seed: 100)
        for _ in 0..<150 {
            let ref = ReferenceTree.random(&rng, size: rng.int(1...60))
            let reference = try ref.build(order: Array(ref.nodes.indices))
            checkAgainstReference(reference, ref)
            #expect(reference.shape == ref.shape)
            for _ in 0..<6 {
                let tree = try ref.build(order: ref.topologicalOrder(&rng))
                checkAgainstReference(tree, ref)
                #expect(tree.shape == ref.shape)
                #expect(tree.mergeBase == reference.mergeBase)
            }
            for _ in 0..<4 {
                let tree = try ref.buildFromHistories(&rng)
                checkAgainstReference(tree, ref)
                #expect(tree.shape == ref.shape)
                #expect(tree.mergeBase == reference.mergeBase)
            }
        }
    }

    @Test func commonAncestorMatchesBruteForce() throws {
        var rng = SplitMix64(seed: 101)
        for _ in 0..<200 {
            let ref = ReferenceTree.random(&rng, size: rng.int(1...50))
            let tree = try ref.build(order: ref.topologicalOrder(&rng))
            for _ in 0..<5 {
                let members = (0..<rng.int(1...4)).map { _ in rng.int(0...(ref.nodes.count - 1)) }
                let expected = bruteCommonAncestor(ref, members)
                #expect(tree.commonAncestor(of: members.map { ref.nodes[$0].rev }) == expected)
            }
            let live = ref.leafIndices.filter { !ref.nodes[$0].deleted }
            #expect(tree.mergeBase == (live.count >= 2 ? bruteCommonAncestor(ref, live) : nil))
        }
    }

    @Test func ancestryQueriesMatchBruteForce() throws {
        var rng = SplitMix64(seed: 102)
        for _ in 0..<150 {
            let ref = ReferenceTree.random(&rng, size: rng.int(1...40))
            let tree = try ref.build(order: ref.topologicalOrder(&rng))
            for _ in 0..<8 {
                let a = rng.int(0...(ref.nodes.count - 1))
                let b = rng.int(0...(ref.nodes.count - 1))
                let strictAncestor = a != b && ref.path(from: b).contains(a)
                #expect(tree.isAncestor(ref.nodes[a].rev, of: ref.nodes[b].rev) == strictAncestor)
                #expect(tree.history(of: ref.nodes[b].rev) == ref.history(of: b))
                let descendants = ref.expectedLeaves.filter { leaf in
                    ref.path(from: ref.nodes.firstIndex { $0.rev == leaf }!).contains(a)
                }
                #expect(tree.leaves(descendingFrom: ref.nodes[a].rev) == descendants)
            }
        }
    }

    @Test func deepTreeWithManyBranches() throws {
        // 1000 generations, 10 conflicting branches of 50 revisions each.
        var tree = RevTree()
        var rng = SplitMix64(seed: 103)
        var trunk = [RevID]()
        var parent: RevID?
        for g in 1...1000 {
            let rev = RevID(generation: g, digest: rng.hexDigest())
            try tree.insert(rev, parent: parent, deleted: false, hasBody: false, sequence: UInt64(g))
            trunk.append(rev)
            parent = rev
        }
        var tips = [RevID]()
        for b in 0..<10 {
            var history = [RevID]()
            let base = trunk[900 + b]
            for k in 1...50 { history.insert(RevID(generation: base.generation + k, digest: rng.hexDigest()), at: 0) }
            let result = try tree.insert(history: history + [base], deleted: false, hasBody: true, sequence: UInt64(2000 + b))
            #expect(result.added == 50)
            tips.append(history[0])
        }
        #expect(tree.count == 1500)
        #expect(tree.leaves.count == 11)
        #expect(tree.hasConflict)
        #expect(tree.winner == tree.leaves.first)
        #expect(tree.winner == trunk.last)   // the trunk tip outranks the branch tips (generation 951...960)
        #expect(tree.mergeBase == trunk[900])
        #expect(tree.history(of: tips[0]).count == 951)
    }
}
