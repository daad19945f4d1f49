import Testing
@testable import DocumentModel

private func r(_ s: String) -> RevID { RevID(s)! }

@Suite struct RevTreeTests {
    @Test func emptyTree() {
        let tree = RevTree()
        #expect(tree.isEmpty)
        #expect(tree.winner == nil)
        #expect(tree.leaves.isEmpty)
        #expect(!tree.isDeleted)
        #expect(!tree.hasConflict)
        #expect(tree.mergeBase == nil)
        #expect(tree.history(of: r("1-a")).isEmpty)
        #expect(tree.commonAncestor(of: []) == nil)
    }

    @Test func linearHistory() throws {
        var tree = RevTree()
        try tree.insert(r("1-a"), parent: nil, deleted: false, hasBody: true, sequence: 1)
        try tree.insert(r("2-b"), parent: r("1-a"), deleted: false, hasBody: true, sequence: 2)
        try tree.insert(r("3-c"), parent: r("2-b"), deleted: false, hasBody: true, sequence: 3)
        #expect(tree.count == 3)
        #expect(tree.winner == r("3-c"))
        #expect(tree.leaves == [r("3-c")])
        #expect(tree.liveLeaves == [r("3-c")])
        #expect(!tree.hasConflict)
        #expect(tree.history(of: r("3-c")) == [r("3-c"), r("2-b"), r("1-a")])
        #expect(tree.parent(of: r("3-c")) == r("2-b"))
        #expect(tree.parent(of: r("1-a")) == nil)
        #expect(tree.isAncestor(r("1-a"), of: r("3-c")))
        #expect(!tree.isAncestor(r("3-c"), of: r("1-a")))
        #expect(!tree.isAncestor(r("3-c"), of: r("3-c")))
        #expect(tree.isLeaf(r("3-c")))
        #expect(!tree.isLeaf(r("2-b")))
        #expect(!tree.isLeaf(r("9-z")))
        #expect(tree.node(for: r("2-b"))?.sequence == 2)
        #expect(tree.node(for: r("2-b"))?.parent == tree.index(of: r("1-a")))
        #expect(tree.children(of: r("1-a")) == [r("2-b")])
        #expect(tree.children(of: r("3-c")) == [])
        #expect(tree.contains(r("1-a")))
        #expect(!tree.contains(r("1-b")))
        #expect(tree.commonAncestor(of: [r("3-c")]) == r("3-c"))
        #expect(tree.commonAncestor(of: [r("3-c"), r("2-b")]) == r("2-b"))
    }

    @Test func insertErrors() throws {
        var tree = RevTree()
        try tree.insert(r("1-a"), parent: nil, deleted: false, hasBody: true, sequence: 1)
        #expect(throws: RevTreeError.duplicate(r("1-a"))) {
            try tree.insert(r("1-a"), parent: nil, deleted: false, hasBody: true, sequence: 2)
        }
        #expect(throws: RevTreeError.unknownParent(r("1-x"))) {
            try tree.insert(r("2-b"), parent: r("1-x"), deleted: false, hasBody: true, sequence: 2)
        }
        #expect {
            try tree.insert(r("3-b"), parent: r("1-a"), deleted: false, hasBody: true, sequence: 2)
        } throws: { error in
            if case RevTreeError.invalidHistory = error { return true }
            return false
        }
        #expect(throws: RevTreeError.self) {
            try tree.insert(r("2-z"), parent: nil, deleted: false, hasBody: true, sequence: 2)
        }
        #expect(tree.count == 1)
    }

    @Test func conflictsFromDivergentHistories() throws {
        var tree = RevTree()
        #expect(try tree.insert(history: [r("2-b"), r("1-a")], deleted: false, hasBody: true, sequence: 1) == (2, nil))
        let x = try tree.insert(history: [r("3-x"), r("2-b"), r("1-a")], deleted: false, hasBody: true, sequence: 2)
        #expect(x.added == 1 && x.commonAncestorIndex == 1)
        let y = try tree.insert(history: [r("4-y2"), r("3-y"), r("2-b")], deleted: false, hasBody: true, sequence: 3)
        #expect(y.added == 2 && y.commonAncestorIndex == 2)
        #expect(tree.node(for: r("3-y"))?.hasBody == false)
        #expect(tree.node(for: r("3-y"))?.sequence == 3)
        #expect(tree.hasConflict)
        #expect(tree.winner == r("4-y2"))
        #expect(tree.leaves == [r("4-y2"), r("3-x")])
        #expect(tree.mergeBase == r("2-b"))
        #expect(tree.leaves(descendingFrom: r("2-b")) == [r("4-y2"), r("3-x")])
        #expect(tree.leaves(descendingFrom: r("1-a")) == [r("4-y2"), r("3-x")])
        #expect(tree.leaves(descendingFrom: r("3-y")) == [r("4-y2")])
        #expect(tree.leaves(descendingFrom: r("3-x")) == [r("3-x")])
        #expect(tree.leaves(descendingFrom: r("5-q")) == [])
        #expect(tree.commonAncestor(of: [r("3-x"), r("4-y2")]) == r("2-b"))
        #expect(tree.commonAncestor(of: [r("3-x"), r("3-y"), r("1-a")]) == r("1-a"))
        // Known revision: nothing changes.
        let before = tree
        #expect(try tree.insert(history: [r("3-x"), r("2-b")], deleted: true, hasBody: false, sequence: 9) == (0, 0))
        #expect(tree == before)
    }

    @Test func sameGenerationTieBreaksOnDigestBytes() throws {
        var tree = RevTree()
        try tree.insert(r("1-a"), parent: nil, deleted: false, hasBody: true, sequence: 1)
        try tree.insert(r("2-B"), parent: r("1-a"), deleted: false, hasBody: true, sequence: 2)
        try tree.insert(r("2-a"), parent: r("1-a"), deleted: false, hasBody: true, sequence: 3)
        try tree.insert(r("2-ab"), parent: r("1-a"), deleted: false, hasBody: true, sequence: 4)
        #expect(tree.leaves == [r("2-ab"), r("2-a"), r("2-B")])
        #expect(tree.mergeBase == r("1-a"))
    }

    @Test func deletedLeaves() throws {
        var tree = RevTree()
        try tree.insert(history: [r("3-x"), r("2-b"), r("1-a")], deleted: false, hasBody: true, sequence: 1)
        try tree.insert(history: [r("3-y"), r("2-b")], deleted: false, hasBody: true, sequence: 2)
        try tree.insert(r("4-t"), parent: r("3-y"), deleted: true, hasBody: true, sequence: 3)
        // A live leaf beats a deleted leaf of higher generation.
        #expect(tree.winner == r("3-x"))
        #expect(tree.leaves == [r("3-x"), r("4-t")])
        #expect(tree.liveLeaves == [r("3-x")])
        #expect(!tree.hasConflict)
        #expect(!tree.isDeleted)
        #expect(tree.mergeBase == nil)
        try tree.insert(r("4-u"), parent: r("3-x"), deleted: true, hasBody: true, sequence: 4)
        #expect(tree.isDeleted)
        #expect(tree.winner == r("4-u"))
        #expect(tree.liveLeaves.isEmpty)
        // Resurrection: a live child of a tombstone.
        try tree.insert(r("5-v"), parent: r("4-t"), deleted: false, hasBody: true, sequence: 5)
        #expect(!tree.isDeleted)
        #expect(tree.winner == r("5-v"))
        tree.setDeleted(r("5-v"), true)
        #expect(tree.isDeleted)
        #expect(tree.leaves == [r("5-v"), r("4-u")])
        tree.setDeleted(r("4-u"), false)
        #expect(tree.winner == r("4-u"))
    }

    @Test func winnerOrder() {
        let live = (rev: r("1-a"), deleted: false)
        let dead = (rev: r("9-z"), deleted: true)
        #expect(RevTree.winnerOrder(live, dead))
        #expect(!RevTree.winnerOrder(dead, live))
        #expect(RevTree.winnerOrder((r("2-a"), false), (r("1-z"), false)))
        #expect(RevTree.winnerOrder((r("2-b"), true), (r("2-a"), true)))
        #expect(!RevTree.winnerOrder((r("2-a"), false), (r("2-a"), false)))
    }

    @Test func historyValidation() throws {
        var tree = RevTree()
        let bad: [[RevID]] = [[], [r("3-a"), r("1-b")], [r("2-a"), r("2-b")], [r("1-a"), RevID(generation: 0, digest: "z")]]
        for history in bad {
            #expect(throws: RevTreeError.self) {
                try tree.insert(history: history, deleted: false, hasBody: true, sequence: 1)
            }
        }
        #expect(tree.isEmpty)
        // A stemmed history becomes a new root above generation 1.
        #expect(try tree.insert(history: [r("7-g"), r("6-f")], deleted: false, hasBody: true, sequence: 1) == (2, nil))
        #expect(tree.history(of: r("7-g")) == [r("7-g"), r("6-f")])
        try tree.insert(history: [r("2-q"), r("1-p")], deleted: false, hasBody: true, sequence: 2)
        #expect(tree.commonAncestor(of: [r("7-g"), r("2-q")]) == nil)
        #expect(tree.mergeBase == nil)
        #expect(tree.hasConflict)
        #expect(tree.winner == r("7-g"))
    }

    @Test func flagsAndEquality() throws {
        var a = RevTree()
        try a.insert(r("1-a"), parent: nil, deleted: false, hasBody: true, sequence: 1)
        var b = a
        #expect(a == b)
        b.setHasBody(r("1-a"), false)
        #expect(b.node(for: r("1-a"))?.hasBody == false)
        #expect(a != b)
        b.setHasBody(r("9-unknown"), true)   // no effect, no crash
        b.setHasBody(r("1-a"), true)
        #expect(a == b)
    }
}
