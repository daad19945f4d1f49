import DocumentModel
import Foundation
import Testing
import TestSupport

/// A conflict made while two nodes were apart (each edits the document with its own
/// version) is resolved by both nodes on their own once they meet, to the identical
/// revision and the identical version vector, and neither resolves it again (no storm),
/// whatever the policy (docs/architecture.md §10.9 rule 4).
@Suite struct VersionConflictMeshTests {
    static let base = "1-" + String(repeating: "a", count: 40)

    @Test(arguments: [ConflictPolicy.winner, .merge, .lww(field: "at"), .deletesWin])
    func bothNodesResolveToTheSameRevisionAndVersion(policy: ConflictPolicy) async throws {
        let directory = TemporaryDirectory(prefix: "shoal-vv-conflict")
        let b = try await TestNode.start(conflicts: policy)
        // A and B each edit the same revision while apart.
        var a = try await TestNode.start(persistent: true, conflicts: policy, directory: directory)
        for node in [a, b] {
            try await node.request("PUT", "/db/doc?new_edits=false", json: ["_rev": .string(Self.base), "n": 0, "at": 0], admin: true)
                .expectStatus(201)
        }
        let onA = try await a.request("PUT", "/db/doc?rev=\(Self.base)", json: ["n": 1, "at": 1, "side": "a"], admin: true)
        if policy == .deletesWin {
            try await b.request("DELETE", "/db/doc?rev=\(Self.base)", admin: true).expectStatus(200)
        } else {
            try await b.request("PUT", "/db/doc?rev=\(Self.base)", json: ["n": 2, "at": 2, "side": "b"], admin: true)
                .expectStatus(201)
        }
        #expect(onA.status == 201)
        // A comes back linked to B: both see the conflict and resolve it.
        await a.stop(keepingData: true)
        a = try await TestNode.start(persistent: true, conflicts: policy, directory: directory) { configuration in
            configuration.heartbeat = .milliseconds(500)
            configuration.peers = ["ws://127.0.0.1:\(b.ports.publicPort)/db"]
        }
        let nodes = [a, b]
        defer { Task { for node in nodes { await node.stop() } } }

        func revisions(_ node: TestNode) async throws -> Set<String> {
            let raw = try await node.request("GET", "/db/_raw/doc", admin: true).json
            return Set((raw["_sync"]?["tree"]?.arrayValue ?? []).compactMap { $0["rev"]?.stringValue })
        }
        func conflicts(_ node: TestNode) async throws -> JSON? {
            try await node.request("GET", "/db/doc?conflicts=true", admin: true).json["_conflicts"]
        }
        // Both nodes saw both edits (and resolved, where the policy acts).
        let same = try await eventually(timeout: .seconds(30)) {
            let (ra, rb) = (try await revisions(a), try await revisions(b))
            let (ca, cb) = (try await conflicts(a), try await conflicts(b))
            return ra == rb && ra.count >= 3 && ca == nil && cb == nil
        }
        #expect(same, "the nodes did not reach the same revisions")
        // Settled: no further resolution by either (no storm), the same vector on both.
        let settled = try await revisions(a)
        try await Task.sleep(for: .seconds(1))
        #expect(try await revisions(a) == settled)
        #expect(try await revisions(b) == settled)
        let rawA = try await a.request("GET", "/db/_raw/doc", admin: true).json["_sync"]?["tree"]?.arrayValue ?? []
        for rev in rawA.compactMap({ $0["rev"]?.stringValue }) {
            let onA = try await a.request("GET", "/db/doc?rev=\(rev)&show_cv=true", admin: true).json["_cv"]
            let onB = try await b.request("GET", "/db/doc?rev=\(rev)&show_cv=true", admin: true).json["_cv"]
            #expect(onA == onB, "\(policy): \(rev) has \(String(describing: onA)) on A, \(String(describing: onB)) on B")
        }
    }
}
