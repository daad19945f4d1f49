import DocumentModel
import Foundation
import Testing
import TestSupport

/// The same edit made on three nodes while apart is one revision (one revision ID) with
/// three versions. Once the nodes are linked in a chain (A–B–C, A and C never meet), every
/// node holds the same vector for it, reconciled from the `changes` rows of its peers
/// (docs/architecture.md §10.9, "Convergence"), and so the same `_cv`.
@Suite struct IdenticalEditsMeshTests {
    @Test func identicalEditsEndWithOneVectorOnEveryNode() async throws {
        let (dirA, dirC) = (TemporaryDirectory(prefix: "shoal-same-a"), TemporaryDirectory(prefix: "shoal-same-c"))
        let b = try await TestNode.start()
        var a = try await TestNode.start(persistent: true, directory: dirA)
        var c = try await TestNode.start(persistent: true, directory: dirC)
        var revs: Set<String> = []
        for node in [a, b, c] {
            let written = try await node.request("PUT", "/db/doc", json: ["same": true], admin: true)
            written.expectStatus(201)
            revs.insert(try #require(written.json["rev"]?.stringValue))
        }
        #expect(revs.count == 1, "identical edits must get one revision ID")
        func vector(_ node: TestNode) async throws -> String? {
            try await node.request("GET", "/db/_raw/doc", admin: true).json["_sync"]?["vv"]?.stringValue
        }
        let apart = try await [vector(a), vector(b), vector(c)]
        #expect(Set(apart.compactMap { $0 }).count == 3, "each node minted its own version: \(apart)")

        // Linked as a chain through B.
        await a.stop(keepingData: true)
        await c.stop(keepingData: true)
        for (index, directory) in [dirA, dirC].enumerated() {
            let node = try await TestNode.start(persistent: true, directory: directory) { configuration in
                configuration.heartbeat = .milliseconds(500)
                configuration.peers = ["ws://127.0.0.1:\(b.ports.publicPort)/db"]
            }
            if index == 0 { a = node } else { c = node }
        }
        let nodes = [a, b, c]
        defer { Task { for node in nodes { await node.stop() } } }

        let expected = try VersionVector.reconciling(apart.map { try VersionVector(parsing: try #require($0)) })
        let same = try await eventually(timeout: .seconds(30)) {
            let now = try await [vector(a), vector(b), vector(c)]
            return now.allSatisfy { $0 == expected.text(style: .syncGateway) }
        }
        let final = try await [vector(a), vector(b), vector(c)]
        #expect(same, "vectors did not converge: \(final), expected \(expected.text(style: .syncGateway))")
        // One revision, one `_cv`, no conflict anywhere.
        for node in nodes {
            let document = try await node.request("GET", "/db/doc?conflicts=true", admin: true).json
            #expect(document["_rev"]?.stringValue == revs.first)
            #expect(document["_cv"]?.stringValue == expected.current.description)
            #expect(document["_conflicts"] == nil)
        }
    }
}
