import DocumentModel
import Foundation
@testable import ShoalNode
import Testing
import TestSupport

/// Seed 004's public/private channels scenario, with its config file loaded unchanged:
/// jane and joe each see the public documents and their own private ones, on the node
/// they write to and on a second node that receives everything through the mesh (where
/// the sync function runs again, as the mesh principal, with the same outcome).
@Suite struct JaneJoeSeedTests {
    static func start(peers: [String] = []) async throws -> TestNode {
        let loaded = try ConfigLoader.load(text: SeedConfigs.janeJoe)
        return try await TestNode.start { configuration in
            configuration.databases = loaded.configuration.databases
            configuration.passwordIterations = 1000
            configuration.heartbeat = .milliseconds(500)
            configuration.peers = peers
        }
    }

    let jane = TestNode.basic("jane", "password")
    let joe = TestNode.basic("joe", "password")

    @Test func publicAndPrivateChannels() async throws {
        let a = try await Self.start()
        let b = try await Self.start(peers: ["ws://127.0.0.1:\(a.ports.publicPort)/demo"])
        defer { Task { for node in [a, b] { await node.stop() } } }

        // GUEST is disabled in this config.
        try await a.request("GET", "/demo/_all_docs").expectError(401, "Unauthorized")
        #expect(try await a.request("PUT", "/demo/doc101", json: ["name": "doc101", "overview": "This is a private doc from Jane", "owner": "jane", "tag": "private"], headers: jane).status == 201)
        #expect(try await a.request("PUT", "/demo/doc102", json: ["name": "doc102", "overview": "This is a public doc shared by Jane", "owner": "jane", "tag": "public"], headers: jane).status == 201)
        // joe cannot write a private document in jane's name, nor one without a tag.
        try await a.request("PUT", "/demo/doc103", json: ["owner": "jane", "tag": "private"], headers: joe)
            .expectError(403, "forbidden", reason: "wrong user")
        try await a.request("PUT", "/demo/doc104", json: ["owner": "joe"], headers: joe)
            .expectError(403, "forbidden", reason: "Invalid document type: Tag not providedundefined")
        #expect(try await a.request("PUT", "/demo/doc105", json: ["owner": "joe", "tag": "private", "name": "joe's"], headers: joe).status == 201)
        // The tag of a document cannot change.
        let rev = try #require(try await a.request("GET", "/demo/doc105", headers: joe).rev)
        try await a.request("PUT", "/demo/doc105?rev=\(rev)", json: ["owner": "joe", "tag": "public"], headers: joe)
            .expectError(403, "forbidden", reason: "Cannot change tag of document")

        for node in [a, b] {
            // b gets everything through the mesh…
            #expect(try await eventually { try await node.request("GET", "/demo/_all_docs", admin: true).json["total_rows"] == 3 })
            // …and each user sees the same on both nodes.
            func visible(_ headers: [String: String]) async throws -> [String] {
                try await node.request("GET", "/demo/_all_docs", headers: headers).json["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            }
            #expect(try await visible(jane) == ["doc101", "doc102"])
            #expect(try await visible(joe) == ["doc102", "doc105"])
            try await node.request("GET", "/demo/doc101", headers: joe).expectError(403, "forbidden")
            // The admin view of seed 004: each row with its channels.
            let admin = try await node.request("GET", "/demo/_all_docs?channels=true&include_docs=true", admin: true).json
            let channels = admin["rows"]?.arrayValue?.map { $0["value"]?["channels"] ?? .null }
            #expect(channels == [["_jane"], ["_public"], ["_joe"]])
        }
    }
}
