import DocumentModel
import Foundation
import Testing
import TestSupport

/// Several nodes in one process, split in two groups that edit the same documents,
/// then joined: every node must end with the same trees, winners and bodies, and
/// the resolutions written independently on each node must be the very same
/// revisions (no new conflict, no resolution storm).
@Suite struct ConflictResolutionMeshTests {
    static let policies = ConflictPolicies(default: .winner, byType: ["task": .merge, "task-list": .winner])

    static func startNodes(_ count: Int) async throws -> [TestNode] {
        var nodes: [TestNode] = []
        for _ in 0..<count {
            nodes.append(try await TestNode.start { configuration in
                for index in configuration.databases.indices { configuration.databases[index].conflicts = policies }
            })
        }
        return nodes
    }

    static func sync(_ from: TestNode, _ to: TestNode, _ id: String, continuous: Bool) async throws {
        try await from.replicate(id, ["remote": .string(to.syncURL), "direction": "pushAndPull", "continuous": .bool(continuous)])
        if !continuous { _ = try await from.waitForReplication(id) }
    }

    /// Every document's leaves with their deleted flags, winner and winner body.
    static func picture(_ node: TestNode) async throws -> [String: JSON] {
        var result: [String: JSON] = [:]
        for (id, _) in try await node.snapshot() {
            let revs = try await node.request("GET", "/db/\(id)?open_revs=all&revs=true").json
            let winner = try await node.request("GET", "/db/\(id)?conflicts=true&deleted=true").json
            result[id] = ["leaves": revs, "winner": winner]
        }
        return result
    }

    @Test(arguments: [4, 5])
    func partitionedGroupsEditTheSameDocumentsAndConvergeWithoutExtraRevisions(nodeCount: Int) async throws {
        let nodes = try await Self.startNodes(nodeCount)
        do {
            try await run(nodes)
        } catch {
            for node in nodes { await node.stop() }
            throw error
        }
        for node in nodes { await node.stop() }
    }

    func run(_ nodes: [TestNode]) async throws {
        let nodeCount = nodes.count
        let groupA = Array(nodes.prefix(nodeCount / 2)), groupB = Array(nodes.dropFirst(nodeCount / 2))
        let first = nodes[0]
        // The documents everyone starts from.
        var revs: [String: String] = [:]
        for i in 0..<5 {
            revs["task-\(i)"] = try await first.put("task-\(i)", ["type": "task", "name": .string("Buy milk \(i)"), "complete": false])
            revs["list-\(i)"] = try await first.put("list-\(i)", ["type": "task-list", "name": .string("Groceries \(i)")])
            revs["clash-\(i)"] = try await first.put("clash-\(i)", ["type": "task", "name": "same", "n": 0])
            revs["del-\(i)"] = try await first.put("del-\(i)", ["type": "task", "name": "old", "n": 0])
        }
        for (index, node) in nodes.dropFirst().enumerated() { try await Self.sync(first, node, "seed\(index)", continuous: false) }

        // Partition: each group edits on its first node, then syncs inside the group.
        for i in 0..<5 {
            let a = groupA[0], b = groupB[0]
            _ = try await a.put("task-\(i)", ["_rev": .string(revs["task-\(i)"]!), "type": "task", "name": .string("Buy oat milk \(i)"), "complete": false])
            _ = try await b.put("task-\(i)", ["_rev": .string(revs["task-\(i)"]!), "type": "task", "name": .string("Buy milk \(i)"), "complete": true])
            _ = try await a.put("list-\(i)", ["_rev": .string(revs["list-\(i)"]!), "type": "task-list", "name": .string("Food \(i)")])
            _ = try await b.put("list-\(i)", ["_rev": .string(revs["list-\(i)"]!), "type": "task-list", "name": .string("Shopping \(i)")])
            _ = try await a.put("clash-\(i)", ["_rev": .string(revs["clash-\(i)"]!), "type": "task", "name": "from a", "n": 1])
            _ = try await b.put("clash-\(i)", ["_rev": .string(revs["clash-\(i)"]!), "type": "task", "name": "from b", "n": 0])
            // Deleted on one side, edited on the other: the edit is the only live leaf.
            try await a.request("DELETE", "/db/del-\(i)?rev=\(revs["del-\(i)"]!)").expectStatus(200)
            _ = try await b.put("del-\(i)", ["_rev": .string(revs["del-\(i)"]!), "type": "task", "name": "kept", "n": 1])
        }
        for group in [groupA, groupB] {
            for (index, node) in group.dropFirst().enumerated() { try await Self.sync(group[0], node, "group\(index)", continuous: false) }
        }

        // Heal: a continuous link between neighbours of a ring over all nodes.
        for (index, node) in nodes.enumerated() {
            try await Self.sync(node, nodes[(index + 1) % nodes.count], "heal", continuous: true)
        }
        var pictures: [[String: JSON]] = []
        let converged = try await eventually(timeout: .seconds(60), every: .milliseconds(200)) {
            pictures = []
            for node in nodes { pictures.append(try await Self.picture(node)) }
            let conflicts = try await nodes.asyncContains { try await $0.request("GET", "/db/_conflicts", admin: true).json["total_rows"] != 0 }
            return !conflicts && pictures.allSatisfy { $0 == pictures[0] }
        }
        #expect(converged, "nodes did not converge")

        for i in 0..<5 {
            // The task: both changes, merged against the base.
            let task = try await first.request("GET", "/db/task-\(i)?revs=true").json
            #expect(task["name"]?.stringValue == "Buy oat milk \(i)")
            #expect(task["complete"] == true)
            // Base (1) + two edits (2) + the merged child and one tombstone (3): five revisions,
            // whatever node wrote them, and no resolution of a resolution.
            let open = try await first.request("GET", "/db/task-\(i)?open_revs=all").json.arrayValue ?? []
            #expect(open.count == 2, "task-\(i): \(open)")
            #expect(task["_rev"]?.stringValue?.hasPrefix("3-") == true)
            // The list: the winner's name, the other branch tombstoned.
            let list = try await first.request("GET", "/db/list-\(i)?conflicts=true").json
            #expect(["Food \(i)", "Shopping \(i)"].contains(list["name"]?.stringValue ?? ""))
            #expect(list["_conflicts"] == nil)
            #expect(list["_rev"]?.stringValue?.hasPrefix("2-") == true)
            // Same property changed on both sides: the winner-order branch's value, other changes kept.
            let clash = try await first.request("GET", "/db/clash-\(i)").json
            #expect(["from a", "from b"].contains(clash["name"]?.stringValue ?? ""))
            #expect(clash["n"] == 1)
            // The edit survives the delete on every node, and no resolution was needed.
            let deleted = try await first.request("GET", "/db/del-\(i)?conflicts=true&deleted_conflicts=true").json
            #expect(deleted["name"] == "kept" && deleted["_conflicts"] == nil)
            #expect(deleted["_deleted_conflicts"]?.arrayValue?.count == 1)
        }
        // Revisions written by resolutions, summed over the nodes, may count the same
        // revision on several nodes; the distinct revisions are what one node writes.
        let expectedDistinct = 5 * 2 + 5 * 1 + 5 * 2   // tasks: child+tombstone; lists: tombstone; clashes: child+tombstone
        var distinct = Set<String>()
        for id in (0..<5).flatMap({ ["task-\($0)", "list-\($0)", "clash-\($0)"] }) {
            let open = try await first.request("GET", "/db/\(id)?open_revs=all").json.arrayValue ?? []
            // Every resolution revision is a generation-3 leaf (a child of a generation-2 edit).
            for entry in open {
                if let rev = entry["ok"]?["_rev"]?.stringValue, rev.hasPrefix("3-") { distinct.insert(id + " " + rev) }
            }
        }
        #expect(distinct.count == expectedDistinct, "\(distinct.sorted())")
    }
}

extension Array where Element: Sendable {
    func asyncContains(_ predicate: (Element) async throws -> Bool) async rethrows -> Bool {
        for element in self where try await predicate(element) { return true }
        return false
    }
}

/// A node that holds only a placeholder of the merge base fetches its body from
/// a peer with the Shoal extension message `shoal/getRev`, then merges.
@Suite struct MergeBaseFetchTests {
    @Test func missingMergeBaseIsFetchedFromThePeer() async throws {
        // The holder keeps the conflict (policy none) and has the base body; the
        // other node merges but learns the base only as a placeholder.
        let holder = try await TestNode.start(conflicts: ConflictPolicy.none)
        let merger = try await TestNode.start(conflicts: ConflictPolicy.merge)
        do {
            let base: [String: JSON] = ["name": "a", "n": 1]
            let baseRev = try #require(try await holder.request("PUT", "/db/doc", json: .object(base)).json["rev"]?.stringValue)
            var leaves: [JSON] = []
            for body in [["name": "b", "n": 1], ["name": "a", "n": 2]] as [[String: JSON]] {
                let digest = RevID.compute(parent: RevID(baseRev), deleted: false, canonicalBody: RevisionBody.digestBody(body)).digest
                var doc = body
                doc["_id"] = "doc"
                doc["_rev"] = .string("2-\(digest)")
                doc["_revisions"] = ["start": 2, "ids": [.string(digest), .string(String(baseRev.split(separator: "-")[1]))]]
                leaves.append(.object(doc))
            }
            for node in [holder, merger] {
                let response = try await node.request("POST", "/db/_bulk_docs", json: ["new_edits": false, "docs": .array(leaves)])
                #expect(response.status == 201, "\(response)")
            }
            // Alone, the merger cannot resolve: it waits for the base.
            #expect(try await eventually {
                try await merger.request("GET", "/db/_conflicts", admin: true).json["rows"]?[0]?["waiting_for_merge_base"] == .string(baseRev)
            })
            // Once connected to the holder, it fetches the base and merges.
            try await merger.replicate("link", ["remote": .string(holder.syncURL), "direction": "pull", "continuous": true])
            #expect(try await eventually(timeout: .seconds(20)) {
                let doc = try await merger.request("GET", "/db/doc?conflicts=true").json
                return doc["name"] == "b" && doc["n"] == 2 && doc["_conflicts"] == nil
            })
            #expect(try await merger.request("GET", "/db/doc?rev=\(baseRev)").json["name"] == "a")
        } catch {
            await holder.stop()
            await merger.stop()
            throw error
        }
        await holder.stop()
        await merger.stop()
    }
}
