import Testing
import TestSupport
@testable import DocumentModel

private func r(_ s: String) -> RevID { RevID(s)! }

@Suite(.ownThread) struct RevTreeStemmingTests {
    @Test func linearStemming() throws {
        var tree = RevTree()
        var parent: RevID?
        for g in 1...10 {
            let rev = RevID(generation: g, digest: "d\(g)")
            try tree.insert(rev, parent: parent, deleted: false, hasBody: true, sequence: UInt64(g))
            parent = rev
        }
        let removed = tree.stem(limit: 3)
        #expect(removed == (1...7).map { RevID(generation: $0, digest: "d\($0)") })
        #expect(tree.history(of: r("10-d10")) == [r("10-d10"), r("9-d9"), r("8-d8")])
        #expect(tree.parent(of: r("8-d8")) == nil)
        #expect(tree.node(for: r("9-d9"))?.sequence == 9)
        #expect(tree.stem(limit: 3).isEmpty)
        #expect(tree.stem(limit: 0) == [r("8-d8"), r("9-d9")])   // a limit below 1 keeps the leaf
        #expect(tree.leaves == [r("10-d10")])
        // The stemmed tree still accepts children and attaching histories.
        try tree.insert(r("11-e"), parent: r("10-d10"), deleted: false, hasBody: true, sequence: 11)
        #expect(try tree.insert(history: [r("12-f"), r("11-e"), r("10-d10"), r("9-d9")], deleted: false,
                                hasBody: true, sequence: 12) == (1, 1))
    }

    @Test func keepsMergeBaseAndPathsToIt() throws {
        var tree = RevTree()
        var trunk = [RevID]()
        var parent: RevID?
        for g in 1...5 {
            let rev = RevID(generation: g, digest: "t\(g)")
            try tree.insert(rev, parent: parent, deleted: false, hasBody: true, sequence: UInt64(g))
            trunk.append(rev)
            parent = rev
        }
        // Two branches from 2-t2, ten generations each beyond it.
        var a = [RevID](), b = [RevID]()
        for g in 3...12 {
            a.insert(RevID(generation: g, digest: "a\(g)"), at: 0)
            b.insert(RevID(generation: g, digest: "b\(g)"), at: 0)
        }
        try tree.insert(history: a + [trunk[1]], deleted: false, hasBody: true, sequence: 10)
        try tree.insert(history: b + [trunk[1]], deleted: false, hasBody: true, sequence: 11)
        #expect(tree.mergeBase == r("2-t2"))
        let leavesBefore = tree.leaves
        let removed = tree.stem(limit: 2)
        #expect(tree.leaves == leavesBefore)
        #expect(tree.mergeBase == r("2-t2"))
        #expect(Set(removed) == [r("1-t1")])   // trunk 3...5 is within limit of leaf 5-t5
        #expect(tree.history(of: r("12-a12")).last == r("2-t2"))
        // Once branch b is deleted there is no merge base to protect.
        try tree.insert(r("13-bx"), parent: r("12-b12"), deleted: true, hasBody: true, sequence: 12)
        try tree.insert(r("6-t6"), parent: r("5-t5"), deleted: true, hasBody: true, sequence: 13)
        #expect(tree.mergeBase == nil)
        tree.stem(limit: 2)
        #expect(tree.history(of: r("12-a12")) == [r("12-a12"), r("11-a11")])
        #expect(tree.history(of: r("13-bx")) == [r("13-bx"), r("12-b12")])
        #expect(tree.count == 6)
    }

    @Test func randomTreesStemCorrectly() throws {
        var rng = SplitMix64(seed: 200)
        for _ in 0..<300 {
            let ref = ReferenceTree.random(&rng, size: rng.int(1...80))
            var tree = try ref.build(order: ref.topologicalOrder(&rng))
            let original = tree
            let limit = rng.int(1...12)
            let leavesBefore = tree.leaves
            let mergeBaseBefore = tree.mergeBase
            let removed = tree.stem(limit: limit)

            // Expected survivors: `limit` generations from each leaf, plus live-leaf paths to the merge base.
            var expected = Set<RevID>()
            for leaf in leavesBefore { expected.formUnion(original.history(of: leaf).prefix(limit)) }
            if let base = mergeBaseBefore {
                expected.insert(base)
                for leaf in original.liveLeaves {
                    for rev in original.history(of: leaf) {
                        expected.insert(rev)
                        if rev == base { break }
                    }
                }
            }
            #expect(Set(tree.nodes.map(\.revID)) == expected)
            #expect(Set(removed).isDisjoint(with: expected))
            #expect(removed.count + tree.count == original.count)
            #expect(tree.leaves == leavesBefore)
            #expect(tree.mergeBase == mergeBaseBefore)
            for leaf in leavesBefore {
                #expect(tree.history(of: leaf).count >= min(limit, original.history(of: leaf).count))
            }
            for node in tree.nodes {
                let originalParent = original.parent(of: node.revID)
                let parentNow = tree.parent(of: node.revID)
                #expect(parentNow == (originalParent.flatMap { expected.contains($0) ? $0 : nil }))
                #expect(node == RevTree.Node(revID: node.revID, parent: node.parent,
                                             deleted: original.node(for: node.revID)!.deleted,
                                             hasBody: original.node(for: node.revID)!.hasBody,
                                             sequence: original.node(for: node.revID)!.sequence))
            }
            #expect(tree.stem(limit: limit).isEmpty)
            // Relative order of surviving nodes is preserved.
            let survivorsInOriginalOrder = original.nodes.map(\.revID).filter(expected.contains)
            #expect(tree.nodes.map(\.revID) == survivorsInOriginalOrder)
        }
    }
}
