import Testing
@testable import DocumentModel

/// General rules, `none`, `winner` and the seed todo-app cases.
@Suite struct ConflictResolverTests {
    /// A root and `count` single-edit branches off it, each with its own `name`.
    private func branches(_ count: Int, type: String = "task-list") -> (ConflictScenario, RevID, [RevID]) {
        var doc = ConflictScenario()
        let root = doc.add(["type": .string(type), "name": "List"], after: nil)
        let leaves = (0..<count).map { doc.edit(["type": .string(type), "name": .string("List \($0)")], after: root) }
        return (doc, root, leaves)
    }

    @Test func noConflictWithoutTwoLiveLeaves() throws {
        var doc = ConflictScenario()
        let root = doc.add(["a": 1], after: nil)
        let edit = doc.edit(["a": 2], after: root)
        for policy in [ConflictPolicy.none, .winner, .deletesWin, .merge, .lww(field: "a"), .js] {
            #expect(try doc.resolve(policy) == .noConflict)
        }
        // One live leaf and one deleted leaf: the live one already wins.
        doc.delete(after: doc.edit(["a": 3], after: root))
        #expect(try doc.resolve(.deletesWin) == .noConflict)
        // Every leaf deleted.
        doc.delete(after: edit)
        #expect(try doc.resolve(.merge) == .noConflict)
        #expect(ConflictResolver.resolve(tree: RevTree(), bodies: [:], mergeBaseBody: nil, policy: .winner) == .noConflict)
    }

    @Test func noneKeepsTheConflict() throws {
        for count in [2, 3, 5] {
            let (doc, _, _) = branches(count)
            #expect(try doc.resolve(.none) == .keep)
            #expect(try doc.resolve(.none, withBase: false) == .keep)
        }
    }

    @Test(arguments: [2, 3, 5])
    func winnerTombstonesTheLosers(count: Int) throws {
        let (doc, root, leaves) = branches(count)
        let tree = try doc.tree()
        let live = tree.liveLeaves
        #expect(Set(live) == Set(leaves))
        let resolution = try doc.resolution(.winner)
        #expect(resolution.policy == .winner)
        #expect(resolution.winningLeaf == live[0])
        #expect(resolution.mergeBase == root)
        #expect(resolution.result == nil)
        #expect(!resolution.deletesDocument)
        #expect(resolution.current == live[0])
        #expect(resolution.tombstones.map(\.parent) == Array(live.dropFirst()))
        for tombstone in resolution.tombstones {
            #expect(tombstone.deleted)
            #expect(tombstone.body.isEmpty)
            #expect(tombstone.revID == expectedRevID(parent: tombstone.parent, deleted: true, body: [:]))
            // The same revision a DELETE of that leaf writes (body `{}`).
            #expect(tombstone.revID == RevID.compute(parent: tombstone.parent, deleted: true, canonicalBody: Array("{}".utf8)))
            #expect(tombstone.revID.generation == tombstone.parent.generation + 1)
        }
        let after = try resolution.applied(to: tree)
        #expect(!after.hasConflict)
        #expect(after.winner == live[0])
        #expect(try doc.resolve(.winner, tree: after) == .noConflict)
    }

    @Test func winnerNeedsNoBodies() throws {
        let (doc, _, _) = branches(3)
        let tree = try doc.tree()
        let outcome = ConflictResolver.resolve(tree: tree, bodies: [:], mergeBaseBody: nil, policy: .winner)
        #expect(outcome == (try doc.resolve(.winner)))
        #expect(outcome.resolution?.tombstones.count == 2)
    }

    @Test func winnerUsesTheWinnerOrderNotTheNames() throws {
        // The longer branch wins whatever its digest.
        var doc = ConflictScenario()
        let root = doc.add(["name": "a"], after: nil)
        let long = doc.edit(["name": "long"], after: root, length: 3)
        let short = doc.edit(["name": "short"], after: root)
        let resolution = try doc.resolution(.winner)
        #expect(resolution.winningLeaf == long)
        #expect(resolution.tombstones.map(\.parent) == [short])
        #expect(doc.finalBody(resolution)?["name"] == "long")
    }

    /// Seed case: a `task-list` renamed on two nodes, policy `winner` (the default).
    @Test func taskListRenamedOnTwoNodesKeepsTheWinnersName() throws {
        var doc = ConflictScenario()
        let root = doc.add(["type": "task-list", "name": "Groceries"], after: nil)
        let nodeA = doc.edit(["type": "task-list", "name": "Shopping"], after: root)
        let nodeB = doc.edit(["type": "task-list", "name": "Food"], after: root)
        let tree = try doc.tree()
        let winner = try #require(tree.winner)
        let policies = ConflictPolicies(byType: ["task": .merge])
        #expect(policies.policy(for: tree, bodies: doc.bodies) == .winner)
        let outcome = ConflictResolver.resolve(tree: tree, bodies: doc.bodies, mergeBaseBody: doc.body(root),
                                               policies: policies)
        let resolution = try #require(outcome.resolution)
        #expect(resolution.result == nil)
        #expect(resolution.tombstones.map(\.parent) == [winner == nodeA ? nodeB : nodeA])
        let after = try resolution.applied(to: tree)
        #expect(after.winner == winner)
        #expect(doc.finalBody(resolution)?["name"] == doc.body(winner)?["name"])
    }

    /// Seed case: a `task` edited on two nodes merges to both changes.
    @Test func taskEditedOnTwoNodesMergesBothChanges() throws {
        var doc = ConflictScenario()
        let root = doc.add(["type": "task", "name": "Buy milk", "complete": false], after: nil)
        doc.edit(["type": "task", "name": "Buy oat milk", "complete": false], after: root)
        doc.edit(["type": "task", "name": "Buy milk", "complete": true], after: root)
        let tree = try doc.tree()
        let policies = ConflictPolicies(default: .winner, byType: ["task": .merge])
        let outcome = ConflictResolver.resolve(tree: tree, bodies: doc.bodies, mergeBaseBody: doc.body(root),
                                               policies: policies)
        let resolution = try #require(outcome.resolution)
        let expected: [String: JSON] = ["type": "task", "name": "Buy oat milk", "complete": true]
        let result = try #require(resolution.result)
        #expect(result.body == expected)
        #expect(!result.deleted)
        #expect(result.parent == tree.winner)
        #expect(result.revID == expectedRevID(parent: result.parent, deleted: false, body: expected))
        #expect(String(decoding: result.canonicalBody, as: UTF8.self) == #"{"complete":true,"name":"Buy oat milk","type":"task"}"#)
        #expect(resolution.tombstones.count == 1)
        let after = try resolution.applied(to: tree)
        #expect(after.winner == result.revID)
        #expect(!after.hasConflict)
    }

    @Test func missingLeafBodyFails() throws {
        let (doc, root, _) = branches(2)
        let tree = try doc.tree()
        var bodies = doc.bodies
        bodies[tree.liveLeaves[1]] = nil
        for policy in [ConflictPolicy.merge, .lww(field: "name"), .js] {
            let outcome = ConflictResolver.resolve(tree: tree, bodies: bodies, mergeBaseBody: doc.body(root), policy: policy)
            guard case .failed(let reason) = outcome else {
                Issue.record("expected a failure, got \(outcome)")
                continue
            }
            #expect(reason.contains("\(tree.liveLeaves[1])"))
        }
        #expect(ConflictResolver.resolve(tree: tree, bodies: bodies, mergeBaseBody: nil, policy: .winner).resolution != nil)
    }

    @Test func userBodyKeepsOnlyUserPropertiesAndAttachments() {
        let body: [String: JSON] = ["a": 1, "_id": "x", "_rev": "1-a", "_deleted": false, "_attachments": ["f": ["digest": "d"]]]
        #expect(ConflictResolver.userBody(body) == ["a": 1, "_attachments": ["f": ["digest": "d"]]])
        #expect(ConflictResolver.userBody(["a": 1, "_attachments": nil]) == ["a": 1])
        #expect(ConflictResolver.userBody(["a": 1]) == ["a": 1])
    }
}
