import Testing
@testable import DocumentModel

/// `lww:<field>`: the live leaf whose field ranks highest wins.
@Suite struct ConflictLastWriteWinsTests {
    /// A root and one branch per body; branch `i` has `count - i` edits, so
    /// branch 0 ranks first in winner order.
    private func scenario(_ branches: [JSON]) -> (ConflictScenario, [RevID]) {
        var doc = ConflictScenario()
        let root = doc.add(["name": "base", "at": 0], after: nil)
        let leaves = branches.enumerated().map { doc.edit($1, after: root, length: branches.count - $0) }
        return (doc, leaves)
    }

    /// Resolves with `lww:at` and checks the shape; returns the final body.
    private func resolve(_ branches: [JSON], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: JSON]? {
        let (doc, leaves) = scenario(branches)
        let tree = try doc.tree()
        #expect(tree.liveLeaves == leaves, sourceLocation: sourceLocation)
        let resolution = try doc.resolution(.lww(field: "at"), sourceLocation: sourceLocation)
        #expect(resolution.tombstones.map(\.parent) == Array(leaves.dropFirst()), sourceLocation: sourceLocation)
        if let result = resolution.result {
            #expect(result.parent == leaves[0], sourceLocation: sourceLocation)
            #expect(!result.deleted, sourceLocation: sourceLocation)
            #expect(result.revID == expectedRevID(parent: leaves[0], deleted: false, body: result.body),
                    sourceLocation: sourceLocation)
        }
        #expect(!(try resolution.applied(to: tree).hasConflict), sourceLocation: sourceLocation)
        return doc.finalBody(resolution)
    }

    @Test func greatestNumberWins() throws {
        #expect(try resolve([["name": "a", "at": 1], ["name": "b", "at": 2]]) == ["name": "b", "at": 2])
        #expect(try resolve([["name": "a", "at": 3], ["name": "b", "at": 2], ["name": "c", "at": 2.5]]) == ["name": "a", "at": 3])
        #expect(try resolve([["name": "a", "at": -1], ["name": "b", "at": 0.5], ["name": "c", "at": 7], ["name": "d", "at": 6.99], ["name": "e", "at": 2]])
                == ["name": "c", "at": 7])
    }

    @Test func isoStringsCompareByBytes() throws {
        #expect(try resolve([["name": "a", "at": "2024-05-01T10:00:00Z"], ["name": "b", "at": "2024-05-01T10:00:01Z"]])
                == ["name": "b", "at": "2024-05-01T10:00:01Z"])
        #expect(try resolve([["name": "a", "at": "2024-05-01T10:00:00.000Z"], ["name": "b", "at": "2023-12-31T23:59:59.999Z"],
                             ["name": "c", "at": "2024-04-30T00:00:00.000Z"]])
                == ["name": "a", "at": "2024-05-01T10:00:00.000Z"])
    }

    @Test func missingOrUnusableFieldRanksLowest() throws {
        #expect(try resolve([["name": "a"], ["name": "b", "at": -100]]) == ["name": "b", "at": -100])
        #expect(try resolve([["name": "a", "at": nil], ["name": "b", "at": true], ["name": "c", "at": 0]]) == ["name": "c", "at": 0])
        #expect(try resolve([["name": "a", "at": ["x": 9]], ["name": "b", "at": [9]], ["name": "c", "at": ""]]) == ["name": "c", "at": ""])
        // Nobody has a usable value: all tie, the winner order decides.
        #expect(try resolve([["name": "a"], ["name": "b", "at": false]]) == ["name": "a"])
    }

    @Test func stringsRankAboveNumbers() throws {
        #expect(try resolve([["name": "a", "at": 99_999_999_999], ["name": "b", "at": "0"]]) == ["name": "b", "at": "0"])
    }

    @Test func tiesGoToTheWinnerOrder() throws {
        // Tied with the winning leaf: the winning leaf stays, no child.
        let (doc, leaves) = scenario([["name": "a", "at": 5], ["name": "b", "at": 5.0], ["name": "c", "at": 1]])
        let resolution = try doc.resolution(.lww(field: "at"))
        #expect(resolution.result == nil)
        #expect(resolution.tombstones.map(\.parent) == [leaves[1], leaves[2]])
        // Tied between two losers: the one earlier in winner order.
        #expect(try resolve([["name": "a", "at": 1], ["name": "b", "at": "t"], ["name": "c", "at": "t"], ["name": "d", "at": "s"]])
                == ["name": "b", "at": "t"])
    }

    @Test func numbersCompareExactly() {
        let big: Int64 = 9_007_199_254_740_993   // 2^53 + 1: no Double holds it
        #expect(ConflictResolver.lwwRanksAbove(.int(big), .double(9_007_199_254_740_992)))
        #expect(!ConflictResolver.lwwRanksAbove(.double(9_007_199_254_740_992), .int(big)))
        #expect(ConflictResolver.lwwRanksAbove(.double(2.5), .int(2)))
        #expect(ConflictResolver.lwwRanksAbove(.int(3), .double(2.5)))
        #expect(ConflictResolver.lwwRanksAbove(.int(-2), .double(-2.5)))
        #expect(ConflictResolver.lwwRanksAbove(.double(-2.5), .int(-3)))
        #expect(!ConflictResolver.lwwRanksAbove(.int(2), .double(2)))
        #expect(!ConflictResolver.lwwRanksAbove(.double(2), .int(2)))
        #expect(ConflictResolver.lwwRanksAbove(.double(1e300), .int(.max)))
        #expect(ConflictResolver.lwwRanksAbove(.int(.min), .double(-1e300)))
        #expect(ConflictResolver.lwwRanksAbove(.double(9.223372036854775808e18), .int(.max)))
        #expect(ConflictResolver.lwwRanksAbove(.int(.min), .double(-9.223372036854775808e18)) == false)   // equal: -2^63
        #expect(ConflictResolver.lwwRanksAbove(.double(.infinity), .int(.max)))
        #expect(ConflictResolver.lwwRanksAbove(.int(0), .double(-.infinity)))
        #expect(!ConflictResolver.lwwRanksAbove(.double(.nan), nil))
        #expect(ConflictResolver.lwwRanksAbove(.int(0), .double(.nan)))
    }

    @Test func lastWriteWinnerIndex() {
        #expect(ConflictResolver.lastWriteWinner(field: "t", bodies: [["t": 1]]) == 0)
        #expect(ConflictResolver.lastWriteWinner(field: "t", bodies: [[:], ["t": 1], ["t": 2], ["t": 2]]) == 2)
        #expect(ConflictResolver.lastWriteWinner(field: "t", bodies: [["t": "b"], ["t": "a"], ["t": "b"]]) == 0)
    }

    @Test func reservedKeysOfTheWinningBodyAreDropped() throws {
        var doc = ConflictScenario()
        let root = doc.add(["at": 0], after: nil)
        let winning = doc.edit(["at": 1], after: root, length: 2)
        doc.edit(["at": 2], after: root)
        let tree = try doc.tree()
        var bodies = doc.bodies
        bodies[tree.liveLeaves[1]]?["_rev"] = "x"
        let outcome = ConflictResolver.resolve(tree: tree, bodies: bodies, mergeBaseBody: nil, policy: .lww(field: "at"))
        let result = try #require(outcome.resolution?.result)
        #expect(result.parent == winning)
        #expect(result.body == ["at": 2])
    }
}
