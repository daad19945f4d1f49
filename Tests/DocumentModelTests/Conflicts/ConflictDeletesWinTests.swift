import Testing
@testable import DocumentModel

/// `deletes-win`: a deletion since the merge base deletes the whole document.
@Suite struct ConflictDeletesWinTests {
    private func expectDeletesEverything(_ doc: ConflictScenario, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let tree = try doc.tree()
        let live = tree.liveLeaves
        let resolution = try doc.resolution(.deletesWin, sourceLocation: sourceLocation)
        #expect(resolution.deletesDocument, sourceLocation: sourceLocation)
        #expect(resolution.current == nil, sourceLocation: sourceLocation)
        let result = try #require(resolution.result, sourceLocation: sourceLocation)
        #expect(result.parent == live[0], sourceLocation: sourceLocation)
        #expect(result.deleted && result.body.isEmpty, sourceLocation: sourceLocation)
        #expect(result.revID == expectedRevID(parent: live[0], deleted: true, body: [:]), sourceLocation: sourceLocation)
        #expect(resolution.tombstones.map(\.parent) == Array(live.dropFirst()), sourceLocation: sourceLocation)
        #expect(resolution.revisions.allSatisfy { $0.deleted && $0.body.isEmpty }, sourceLocation: sourceLocation)
        let after = try resolution.applied(to: tree)
        #expect(after.isDeleted, sourceLocation: sourceLocation)
        #expect(after.liveLeaves.isEmpty, sourceLocation: sourceLocation)
        #expect(doc.finalBody(resolution) == nil, sourceLocation: sourceLocation)
    }

    private func expectLikeWinner(_ doc: ConflictScenario, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let resolution = try doc.resolution(.deletesWin, sourceLocation: sourceLocation)
        let winner = try doc.resolution(.winner, sourceLocation: sourceLocation)
        #expect(!resolution.deletesDocument, sourceLocation: sourceLocation)
        #expect(resolution.result == nil, sourceLocation: sourceLocation)
        #expect(resolution.fingerprint == winner.fingerprint, sourceLocation: sourceLocation)
        #expect(resolution.policy == .deletesWin, sourceLocation: sourceLocation)
    }

    @Test func deleteSinceTheMergeBaseDeletesTheDocument() throws {
        // Three nodes: one deletes, two edit.
        var doc = ConflictScenario()
        let root = doc.add(["name": "a"], after: nil)
        let deleted = doc.delete(after: root)
        doc.edit(["name": "b"], after: root)
        doc.edit(["name": "c"], after: root)
        #expect(ConflictResolver.deletedSinceMergeBase(try doc.tree()) == [deleted])
        try expectDeletesEverything(doc)
    }

    @Test func editThenDeleteOnOneBranchCounts() throws {
        var doc = ConflictScenario()
        let root = doc.add(["name": "a"], after: nil)
        doc.delete(after: doc.edit(["name": "x"], after: root, length: 2))
        doc.edit(["name": "b"], after: root)
        doc.edit(["name": "c"], after: root, length: 4)
        try expectDeletesEverything(doc)
    }

    @Test func withoutDeletionItIsWinner() throws {
        for count in [2, 3, 5] {
            var doc = ConflictScenario()
            let root = doc.add(["name": "a"], after: nil)
            for i in 0..<count { doc.edit(["name": .string("n\(i)")], after: root, length: 1 + i % 2) }
            #expect(ConflictResolver.deletedSinceMergeBase(try doc.tree()).isEmpty)
            try expectLikeWinner(doc)
        }
    }

    /// A branch deleted before the merge base (it forks above it) does not count.
    @Test func deletionBeforeTheMergeBaseDoesNotCount() throws {
        var doc = ConflictScenario()
        let root = doc.add(["name": "a"], after: nil)
        let old = doc.delete(after: root)
        let shared = doc.edit(["name": "shared"], after: root)
        doc.edit(["name": "x"], after: shared)
        doc.edit(["name": "y"], after: shared)
        let tree = try doc.tree()
        #expect(tree.mergeBase == shared)
        #expect(tree.leaves.contains(old))
        #expect(ConflictResolver.deletedSinceMergeBase(tree).isEmpty)
        try expectLikeWinner(doc)
    }

    /// A deletion right on the merge base (a tombstone child of it) counts.
    @Test func deletionOfTheMergeBaseItselfCounts() throws {
        var doc = ConflictScenario()
        let root = doc.add(["name": "a"], after: nil)
        let shared = doc.edit(["name": "shared"], after: root)
        let deleted = doc.delete(after: shared)
        doc.edit(["name": "x"], after: shared)
        doc.edit(["name": "y"], after: shared)
        #expect(ConflictResolver.deletedSinceMergeBase(try doc.tree()) == [deleted])
        try expectDeletesEverything(doc)
    }

    @Test func fiveBranchesTwoDeleted() throws {
        var doc = ConflictScenario()
        let root = doc.add(["name": "a"], after: nil)
        for i in 0..<5 { doc.edit(["name": .string("n\(i)")], after: root, length: 1 + i % 3) }
        let d1 = doc.delete(after: doc.edit(["name": "d1"], after: root))
        let d2 = doc.delete(after: root)
        let tree = try doc.tree()
        #expect(tree.liveLeaves.count == 5)
        #expect(Set(ConflictResolver.deletedSinceMergeBase(tree)) == [d1, d2])
        try expectDeletesEverything(doc)
    }

    /// Live leaves without a common ancestor: every deleted leaf counts.
    @Test func withoutCommonAncestorEveryDeletionCounts() throws {
        var doc = ConflictScenario()
        let rootA = doc.add(["name": "a"], after: nil)
        doc.edit(["name": "a2"], after: rootA)
        doc.add(["name": "b"], after: nil)
        let noDeletion = try doc.tree()
        #expect(noDeletion.mergeBase == nil)
        try expectLikeWinner(doc)
        doc.delete(after: doc.add(["name": "c"], after: nil))
        try expectDeletesEverything(doc)
    }

    @Test func needsNeitherBodiesNorMergeBaseBody() throws {
        var doc = ConflictScenario()
        let root = doc.add(["name": "a"], after: nil)
        doc.delete(after: root)
        doc.edit(["name": "b"], after: root)
        doc.edit(["name": "c"], after: root)
        let tree = try doc.tree()
        let bare = ConflictResolver.resolve(tree: tree, bodies: [:], mergeBaseBody: nil, policy: .deletesWin)
        #expect(bare == (try doc.resolve(.deletesWin)))
        #expect(bare.resolution?.deletesDocument == true)
    }

    /// Documented limitation: a tombstone is a tombstone. One that an earlier
    /// `winner`-style resolution wrote on a losing branch counts as a deletion
    /// when a branch that forked before it arrives later.
    @Test func earlierResolutionTombstoneCountsLikeADelete() throws {
        var doc = ConflictScenario()
        let root = doc.add(["name": "a"], after: nil)
        let b = doc.edit(["name": "b"], after: root, length: 2)
        let c = doc.edit(["name": "c"], after: root)
        let first = try doc.resolution(.deletesWin)
        #expect(first.tombstones.map(\.parent) == [c])
        let tombstone = doc.delete(after: c)   // the resolution's tombstone, written on another node
        #expect(tombstone == first.tombstones[0].revID)
        doc.edit(["name": "late"], after: root)   // an offline node's edit arrives
        #expect(try doc.tree().liveLeaves.contains(b))
        try expectDeletesEverything(doc)
    }
}
