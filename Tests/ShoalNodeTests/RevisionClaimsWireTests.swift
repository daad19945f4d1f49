import BLIP
import DocumentModel
import Foundation
import ShoalNode
import Testing
import TestSupport

/// One revision offered to a node over two connections at once, on the raw BLIP wire:
/// the node asks for it once. The second connection's `changes` answer waits while the
/// first receives it and then says "have it"; if the first connection goes away without
/// sending it, the second is asked for it.
@Suite struct RevisionClaimsWireTests {
    typealias RawClient = CollectionsBLIPTests.RawClient

    /// A `changes` offer of one new revision of `docID`.
    static func offer(_ client: RawClient, _ docID: String, _ rev: String) throws -> Int {
        try client.send([("Profile", "changes"), ("ignoreNoConflicts", "true")], body: [[1, .string(docID), .string(rev)]])
    }

    static func text(_ reply: RawBLIP.Reply) -> String { String(decoding: reply.body, as: UTF8.self) }

    /// A node whose heartbeat outlasts the tests: the raw clients answer no ping, and a
    /// loaded suite once took long enough for the node to drop one as silent.
    static func node() async throws -> TestNode {
        try await TestNode.start { configuration in configuration.heartbeat = .seconds(60) }
    }

    /// Two clients of the node at `port`; the first has been asked for `rev` of `docID`.
    static func twoClients(port: Int, firstClaims docID: String, _ rev: String) throws -> (first: RawClient, second: RawClient) {
        let first = try RawClient(port: port, path: "/db/_blipsync", headers: [:])
        let second = try RawClient(port: port, path: "/db/_blipsync", headers: [:])
        let asked = try first.answer(to: try offer(first, docID, rev))
        #expect(text(asked) == "[[]]", "the first connection is asked for it: \(asked)")
        return (first, second)
    }

    @Test func aRevisionAnotherConnectionIsReceivingIsNotAskedForTwice() async throws {
        let node = try await Self.node()
        defer { Task { await node.stop() } }
        let port = node.ports.publicPort
        try await offThePool {
            let (first, second) = try Self.twoClients(port: port, firstClaims: "claimed", "1-c1a1")
            // The second is offered it while the first has not sent it yet.
            let secondOffer = try Self.offer(second, "claimed", "1-c1a1")
            Thread.sleep(forTimeInterval: 0.3)
            let rev = try first.send(
                [("Profile", "rev"), ("id", "claimed"), ("rev", "1-c1a1"), ("sequence", "1")], body: ["from": "first"])
            #expect(try first.answer(to: rev).type == 1)
            let answer = try second.answer(to: secondOffer)
            #expect(Self.text(answer) == "[]", "the second connection is told the node has it: \(answer)")
        }
        let stored = try await node.request("GET", "/db/claimed", admin: true)
        #expect(stored.json["from"]?.stringValue == "first")
    }

    @Test func aClaimEndsWithItsConnection() async throws {
        let node = try await Self.node()
        defer { Task { await node.stop() } }
        let port = node.ports.publicPort
        try await offThePool {
            var firstOnly: [RawClient] = []     // the only reference to the first client
            let second: RawClient
            do {
                let clients = try Self.twoClients(port: port, firstClaims: "dropped", "1-d1a1")
                (firstOnly, second) = ([clients.first], clients.second)
            }
            let secondOffer = try Self.offer(second, "dropped", "1-d1a1")
            Thread.sleep(forTimeInterval: 0.1)
            firstOnly.removeAll()     // gone without sending it (its claim ends at once: WebSocketHandlerTests)
            let answer = try second.answer(to: secondOffer)
            #expect(Self.text(answer) == "[[]]", "the second connection is asked for it: \(answer)")
            let rev = try second.send(
                [("Profile", "rev"), ("id", "dropped"), ("rev", "1-d1a1"), ("sequence", "1")], body: ["from": "second"])
            #expect(try second.answer(to: rev).type == 1)
        }
        let stored = try await node.request("GET", "/db/dropped", admin: true)
        #expect(stored.json["from"]?.stringValue == "second")
    }

    @Test func aSilentHolderDelaysTheOtherConnectionAndDoesNotStopIt() async throws {
        let node = try await Self.node()
        defer { Task { await node.stop() } }
        let port = node.ports.publicPort
        try await offThePool {
            let (first, second) = try Self.twoClients(port: port, firstClaims: "stalled", "1-e1a1")
            // The first never sends it and stays connected: after the wait the second is asked.
            let answer = try second.answer(to: try Self.offer(second, "stalled", "1-e1a1"))
            #expect(Self.text(answer) == "[[]]", "\(answer)")
            withExtendedLifetime(first) {}
        }
    }
}
