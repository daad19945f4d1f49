import BLIP
import DocumentModel
import Foundation
import ShoalNode
import Testing
import TestSupport

/// Echo suppression as a client sees it on the wire: revisions the client offered
/// (`changes`) or proposed (`proposeChanges`) over its connection are not offered back to
/// it by the server's feed on that connection; every other revision still is.
@Suite struct EchoSuppressionTests {
    @Test func offeredAndProposedRevisionsAreNotOfferedBack() async throws {
        let node = try await TestNode.start()
        defer { Task { await node.stop() } }
        var revs: [String: String] = [:]
        for id in ["x", "y", "z"] {
            let created = try await node.request("PUT", "/db/\(id)", json: ["id": .string(id)], admin: true)
            #expect(created.status == 201, "\(created)")
            revs[id] = try #require(created.json["rev"]?.stringValue)
        }
        let port = node.ports.publicPort
        let (x, y) = (revs["x"]!, revs["y"]!)
        try await offThePool {
            let client = try CollectionsBLIPTests.RawClient(port: port, path: "/db/_blipsync", headers: [:])
            // The client has x (it offers it) and y (it proposes it): the server has both too.
            let offer = try client.send([("Profile", "changes"), ("ignoreNoConflicts", "true")], body: [[1, "x", .string(x)]])
            let offerAnswer = try client.answer(to: offer)
            #expect(String(decoding: offerAnswer.body, as: UTF8.self) == "[]", "\(offerAnswer)")
            let proposal = try client.send([("Profile", "proposeChanges")], body: [["y", .string(y)]])
            #expect(String(decoding: try client.answer(to: proposal).body, as: UTF8.self) == "[304]")

            let sub = try client.send([("Profile", "subChanges"), ("batch", "200"), ("versioning", "rev-trees")])
            #expect(try client.answer(to: sub).type == 1)
            let changes = try client.request("changes")
            let offered = (try? JSON.parse(changes.body))?.arrayValue ?? []
            #expect(offered.compactMap { $0[1]?.stringValue } == ["z"], "\(changes)")
            try client.reply(to: changes.number, body: [])
            // Then the feed says it caught up.
            let caughtUp = try client.request("changes")
            #expect(String(decoding: caughtUp.body, as: UTF8.self) == "[]", "\(caughtUp)")
        }
    }
}
