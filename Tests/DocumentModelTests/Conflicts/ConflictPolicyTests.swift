import Testing
@testable import DocumentModel

@Suite struct ConflictPolicyTests {
    @Test(arguments: [
        ("none", ConflictPolicy.none), ("winner", .winner), ("deletes-win", .deletesWin), ("merge", .merge),
        ("js", .js), ("lww:updatedAt", .lww(field: "updatedAt")), ("lww:a:b", .lww(field: "a:b")),
        ("lww:é", .lww(field: "é")),
    ])
    func parsesAndPrintsBack(text: String, policy: ConflictPolicy) throws {
        #expect(try ConflictPolicy(parsing: text) == policy)
        #expect(ConflictPolicy(text) == policy)
        #expect(policy.description == text)
        #expect(ConflictPolicy(policy.description) == policy)
    }

    @Test(arguments: ["", "Winner", " merge", "merge ", "deletes_win", "lww", "lww:", "lww:_rev", "javascript", "last"])
    func refusesUnknownText(text: String) {
        #expect(ConflictPolicy(text) == nil)
        #expect(throws: ConflictPolicyError.self) { try ConflictPolicy(parsing: text) }
    }

    @Test func errorMessagesSayWhatIsWrong() {
        do {
            _ = try ConflictPolicy(parsing: "deletes_win")
            Issue.record("parsed")
        } catch {
            #expect(error.text == "deletes_win")
            #expect(error.description == #"invalid conflict policy "deletes_win": expected one of none, winner, deletes-win, merge, lww:<field>, js"#)
        }
        do {
            _ = try ConflictPolicy(parsing: "lww:")
            Issue.record("parsed")
        } catch {
            #expect(error.description.contains("lww needs a field name"))
        }
        do {
            _ = try ConflictPolicy(parsing: "lww:_updated")
            Issue.record("parsed")
        } catch {
            #expect(error.description.contains("reserved"))
        }
    }

    @Test func whatEachPolicyNeeds() {
        #expect(ConflictPolicy.default == .winner)
        let needBase: [ConflictPolicy] = [.merge, .js]
        let needBodies: [ConflictPolicy] = [.merge, .js, .lww(field: "t")]
        for policy in [ConflictPolicy.none, .winner, .deletesWin, .merge, .lww(field: "t"), .js] {
            #expect(policy.needsMergeBaseBody == needBase.contains(policy))
            #expect(policy.needsLeafBodies == needBodies.contains(policy))
        }
    }

    // MARK: - ConflictPolicies

    @Test func policiesPickByType() {
        let policies = ConflictPolicies(default: .winner, byType: ["task": .merge, "note": .lww(field: "at")])
        #expect(policies.typeField == "type")
        #expect(policies.policy(forType: "task") == .merge)
        #expect(policies.policy(forType: "note") == .lww(field: "at"))
        #expect(policies.policy(forType: "task-list") == .winner)
        #expect(policies.policy(forType: nil) == .winner)
        #expect(policies.policy(forWinningBody: ["type": "task"]) == .merge)
        #expect(policies.policy(forWinningBody: ["type": 3]) == .winner)
        #expect(policies.policy(forWinningBody: ["kind": "task"]) == .winner)
        #expect(policies.policy(forWinningBody: nil) == .winner)
        #expect(ConflictPolicies().defaultPolicy == .winner)
    }

    @Test func policiesUseTheirTypeField() {
        let policies = ConflictPolicies(default: .none, byType: ["task": .merge], typeField: "kind")
        #expect(policies.policy(forWinningBody: ["kind": "task", "type": "other"]) == .merge)
        #expect(policies.policy(forWinningBody: ["type": "task"]) == ConflictPolicy.none)
    }

    @Test func policiesParseConfigurationStrings() throws {
        let policies = try ConflictPolicies(parsingDefault: "deletes-win", byType: ["task": "merge", "note": "lww:at"])
        #expect(policies == ConflictPolicies(default: .deletesWin, byType: ["task": .merge, "note": .lww(field: "at")]))
        do {
            _ = try ConflictPolicies(parsingDefault: "winner", byType: ["task": "merge", "note": "lww"])
            Issue.record("parsed")
        } catch {
            #expect(error.text == "lww")
            #expect(error.description.contains(#"type "note""#))
        }
        #expect(throws: ConflictPolicyError(text: "win", reason: "expected one of none, winner, deletes-win, merge, lww:<field>, js")) {
            try ConflictPolicies(parsingDefault: "win")
        }
    }

    /// The type comes from the winning leaf, even when a losing branch changed it.
    @Test func policiesReadTheWinningLeaf() throws {
        var doc = ConflictScenario()
        let root = doc.add(["type": "task", "name": "a"], after: nil)
        let winning = doc.edit(["type": "note", "name": "a"], after: root, length: 2)
        doc.edit(["type": "task", "name": "b"], after: root)
        let tree = try doc.tree()
        #expect(tree.liveLeaves.first == winning)
        let policies = ConflictPolicies(default: .winner, byType: ["task": .merge, "note": .none])
        #expect(policies.policy(for: tree, bodies: doc.bodies) == ConflictPolicy.none)
        #expect(policies.policy(for: tree, bodies: [:]) == .winner)
        let outcome = ConflictResolver.resolve(tree: tree, bodies: doc.bodies, mergeBaseBody: doc.body(root),
                                               policies: policies)
        #expect(outcome == .keep)
    }
}
