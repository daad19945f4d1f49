import DocumentModel
import Foundation
import Testing
import TestSupport

@Suite struct AttachmentEndpointTests {
    @Test func putGetDeleteStandaloneAttachment() async throws {
        try await withNode { node in
            let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let put = try await node.request("PUT", "/db/doc/photo.jpg", raw: bytes, headers: ["Content-Type": "image/jpeg"])
            #expect(put.status == 201)
            let rev1 = try #require(put.rev)
            let get = try await node.request("GET", "/db/doc/photo.jpg")
            #expect(get.status == 200)
            #expect(get.headers["content-type"] == "image/jpeg")
            #expect(get.body == bytes)
            let doc = try await node.request("GET", "/db/doc")
            let meta = try #require(doc.json["_attachments"]?["photo.jpg"])
            #expect(meta["stub"] == true)
            #expect(meta["length"] == 200_000)
            #expect(meta["revpos"] == 1)
            #expect(meta["digest"] == .string(Digests.attachmentDigest(sha1: SHA1.hash(bytes))))

            // A second attachment keeps the first; its revpos is the new generation.
            let put2 = try await node.request("PUT", "/db/doc/notes.txt?rev=\(rev1)", raw: Array("hi".utf8), headers: ["Content-Type": "text/plain"])
            let rev2 = try #require(put2.rev)
            let doc2 = try await node.request("GET", "/db/doc")
            #expect(doc2.json["_attachments"]?["photo.jpg"]?["revpos"] == 1)
            #expect(doc2.json["_attachments"]?["notes.txt"]?["revpos"] == 2)
            // Stale rev → conflict; unknown attachment → 404.
            try await node.request("PUT", "/db/doc/x.txt?rev=\(rev1)", raw: [1], headers: [:]).expectError(409, "conflict")
            try await node.request("GET", "/db/doc/none.txt").expectError(404, "not_found")
            try await node.request("DELETE", "/db/doc/none.txt?rev=\(rev2)").expectError(404, "not_found")

            let deleted = try await node.request("DELETE", "/db/doc/photo.jpg?rev=\(rev2)")
            #expect(deleted.status == 200)
            try await node.request("GET", "/db/doc/photo.jpg").expectError(404, "not_found")
            // Old revisions still serve their attachments.
            #expect(try await node.request("GET", "/db/doc/photo.jpg?rev=\(rev1)").body == bytes)
        }
    }

    @Test func inlineAttachmentsStubsAndAttsSince() async throws {
        try await withNode { node in
            let put = try await node.request("PUT", "/db/doc", json: [
                "title": "t",
                "_attachments": ["a.txt": ["content_type": "text/plain", "data": .string(Data("alpha".utf8).base64EncodedString())]],
            ])
            let rev1 = try #require(put.rev)
            let rev2 = try #require(try await node.request("PUT", "/db/doc", json: [
                "_rev": .string(rev1), "title": "t2",
                "_attachments": [
                    "a.txt": ["stub": true],
                    "b.txt": ["content_type": "text/plain", "data": .string(Data("beta".utf8).base64EncodedString())],
                ],
            ]).rev)
            let full = try await node.request("GET", "/db/doc?attachments=true")
            #expect(full.json["_attachments"]?["a.txt"]?["data"] == .string(Data("alpha".utf8).base64EncodedString()))
            #expect(full.json["_attachments"]?["b.txt"]?["data"] == .string(Data("beta".utf8).base64EncodedString()))
            let since = try await node.request("GET", "/db/doc?attachments=true&atts_since=%5B%22\(rev1)%22%5D")
            #expect(since.json["_attachments"]?["a.txt"]?["stub"] == true)
            #expect(since.json["_attachments"]?["a.txt"]?["data"] == nil)
            #expect(since.json["_attachments"]?["b.txt"]?["data"] != nil)
            #expect(try await node.request("GET", "/db/doc/a.txt?rev=\(rev2)").text == "alpha")
            try await node.request("PUT", "/db/other", json: ["_attachments": ["x": ["stub": true]]]).expectError(412, "missing_stub")
            try await node.request("PUT", "/db/other", json: ["_attachments": ["x": ["data": "%%%"]]]).expectError(400, "bad_request")
        }
    }
}
