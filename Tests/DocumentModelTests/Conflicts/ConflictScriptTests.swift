import Testing
@testable import DocumentModel

/// A conflict script backed by a Swift closure; records its input.
final class ClosureScript: ConflictScript, @unchecked Sendable {
    let body: ([JSON], JSON?) throws -> JSON?
    private(set) var calls: [(conflicts: [JSON], base: JSON?)] = []

    init(_ body: @escaping ([JSON], JSON?) throws -> JSON?) { self.body = body }

    func resolve(conflicts: [JSON], base: JSON?) throws -> JSON? {
        calls.append((conflicts, base))
        return try body(conflicts, base)
    }
}

/// A pure script: the base with `count` = the sum of the branches' counts.
struct SumScript: ConflictScript {
    func resolve(conflicts: [JSON], base: JSON?) throws -> JSON? {
        var result = conflicts[0].objectValue ?? [:]
        result["count"] = .int(conflicts.reduce(0) { $0 + ($1["count"]?.intValue ?? 0) })
        return .object(result)
    }
}

struct ScriptError: Error, CustomStringConvertible {
    var description: String { "TypeError: x is undefined" }
}

/// `js`: the configured function computes the result.
@Suite struct ConflictScriptTests {
    private func scenario(_ count: Int) -> (ConflictScenario, RevID, [RevID]) {
        var doc = ConflictScenario()
        let root = doc.add(["count": 0, "name": "n"], after: nil)
        let leaves = (0..<count).map { doc.edit(["count": .int(Int64($0 + 1)), "name": "n"], after: root, length: count - $0) }
        return (doc, root, leaves)
    }

    @Test func scriptSeesTheLeavesInWinnerOrderAndTheBase() throws {
        let (doc, root, leaves) = scenario(3)
        let script = ClosureScript { conflicts, _ in conflicts[1] }
        let resolution = try doc.resolution(.js, script: script)
        let call = try #require(script.calls.first)
        #expect(call.conflicts == leaves.enumerated().map { i, leaf in
            ["count": .int(Int64(i + 1)), "name": "n", "_rev": .string(leaf.description)]
        })
        #expect(call.base == ["count": 0, "name": "n", "_rev": .string(root.description)])
        // `_rev` copied from the input does not reach the body.
        let result = try #require(resolution.result)
        #expect(result.body == ["count": 2, "name": "n"])
        #expect(result.parent == leaves[0])
        #expect(result.revID == expectedRevID(parent: leaves[0], deleted: false, body: ["count": 2, "name": "n"]))
        #expect(resolution.tombstones.map(\.parent) == [leaves[1], leaves[2]])
    }

    @Test(arguments: [2, 3, 5])
    func pureScriptOnSeveralBranches(count: Int) throws {
        let (doc, _, leaves) = scenario(count)
        let resolution = try doc.resolution(.js, script: SumScript())
        let expected = Int64((1...count).reduce(0, +))
        #expect(doc.finalBody(resolution) == ["count": .int(expected), "name": "n"])
        #expect(resolution.tombstones.count == count - 1)
        #expect(!(try resolution.applied(to: doc.tree()).hasConflict))
        #expect(resolution.result?.parent == leaves[0])
    }

    @Test func reservedKeysAreStrippedButAttachmentsKept() throws {
        let (doc, _, _) = scenario(2)
        let script = ClosureScript { _, _ in
            ["a": 1, "_id": "doc", "_rev": "9-x", "_conflicts": [], "_deleted": false,
             "_attachments": ["f": ["digest": "sha1-x", "length": 1, "revpos": 1]]]
        }
        let result = try #require(try doc.resolution(.js, script: script).result)
        #expect(result.body == ["a": 1, "_attachments": ["f": ["digest": "sha1-x", "length": 1, "revpos": 1]]])
    }

    @Test(arguments: [JSON?.none, .some(.null), .some(["_deleted": true, "a": 1])])
    func nullOrDeletedMeansDelete(answer: JSON?) throws {
        let (doc, _, leaves) = scenario(3)
        let resolution = try doc.resolution(.js, script: ClosureScript { _, _ in answer })
        #expect(resolution.deletesDocument)
        #expect(resolution.result == .tombstone(of: leaves[0]))
        #expect(resolution.tombstones == [.tombstone(of: leaves[1]), .tombstone(of: leaves[2])])
        #expect(try resolution.applied(to: doc.tree()).isDeleted)
    }

    @Test func resultEqualToTheWinnerWritesNoChild() throws {
        let (doc, _, leaves) = scenario(2)
        let resolution = try doc.resolution(.js, script: ClosureScript { conflicts, _ in conflicts[0] })
        #expect(resolution.result == nil)
        #expect(resolution.tombstones.map(\.parent) == [leaves[1]])
    }

    @Test func failures() throws {
        let (doc, _, _) = scenario(2)
        #expect(try doc.resolve(.js, script: ClosureScript { _, _ in throw ScriptError() })
                == .failed(reason: "the conflict script failed: TypeError: x is undefined"))
        #expect(try doc.resolve(.js, script: ClosureScript { _, _ in "text" })
                == .failed(reason: "the conflict script returned a string; expected an object, or null to delete"))
        #expect(try doc.resolve(.js, script: ClosureScript { _, _ in [1] })
                == .failed(reason: "the conflict script returned an array; expected an object, or null to delete"))
        #expect(try doc.resolve(.js) == .failed(reason: "policy js needs a conflict script, and none is configured"))
    }

    @Test func needsTheMergeBaseBodyUnlessThereIsNoCommonAncestor() throws {
        let (doc, root, _) = scenario(2)
        let script = ClosureScript { conflicts, _ in conflicts[0] }
        #expect(try doc.resolve(.js, script: script, withBase: false) == .needsMergeBase(root))
        #expect(script.calls.isEmpty)

        var rootless = ConflictScenario()
        rootless.add(["a": 1], after: nil)
        rootless.add(["a": 2], after: nil)
        let rootlessScript = ClosureScript { conflicts, _ in ["sum": .int(conflicts.compactMap { $0["a"]?.intValue }.reduce(0, +))] }
        let resolution = try rootless.resolution(.js, script: rootlessScript)
        #expect(rootlessScript.calls.first?.base == nil)
        #expect(resolution.result?.body == ["sum": 3])
    }
}
