import Testing
@testable import DocumentModel

@Suite struct RevisionBodyTests {
    private func digestText(_ text: String) throws -> String {
        String(decoding: RevisionBody.digestBody(try JSON.parse(text).objectValue!), as: UTF8.self)
    }

    @Test func dropsReservedKeysButKeepsUserData() throws {
        #expect(try digestText(#"{"_id":"d","_rev":"1-a","_deleted":true,"_revisions":{},"_conflicts":[],"x":1,"y_":{"_z":2}}"#)
            == #"{"x":1,"y_":{"_z":2}}"#)
        #expect(try digestText("{}") == "{}")
    }

    @Test func attachmentsReducedToThreeFields() throws {
        let text = #"""
        {"_attachments": {"b.txt": {"digest": "sha1-x", "length": 3, "revpos": 2, "stub": true},
                          "a.png": {"content_type": "image/png", "digest": "sha1-y", "length": 10, "data": "AAAA", "follows": true}},
         "v": 1}
        """#
        #expect(try digestText(text) == #"{"_attachments":{"a.png":{"content_type":"image/png","digest":"sha1-y","length":10},"b.txt":{"content_type":"application/octet-stream","digest":"sha1-x","length":3}},"v":1}"#)
    }

    @Test func stubAndRevposDoNotChangeTheDigest() throws {
        let upload = #"{"_attachments":{"f":{"content_type":"text/plain","digest":"sha1-q","length":5,"data":"aGVsbG8="}},"k":"v"}"#
        let stub = #"{"k":"v","_rev":"2-x","_attachments":{"f":{"stub":true,"revpos":1,"length":5,"digest":"sha1-q","content_type":"text/plain"}}}"#
        #expect(try digestText(upload) == digestText(stub))
        let other = #"{"k":"v","_attachments":{"f":{"length":5,"digest":"sha1-OTHER","content_type":"text/plain"}}}"#
        #expect(try digestText(upload) != digestText(other))
    }

    @Test func emptyOrNullAttachmentsAreDropped() throws {
        #expect(try digestText(#"{"_attachments":{},"a":1}"#) == #"{"a":1}"#)
        #expect(try digestText(#"{"_attachments":null,"a":1}"#) == #"{"a":1}"#)
        #expect(try digestText(#"{"_attachments":5,"a":1}"#) == #"{"_attachments":5,"a":1}"#)
    }
}
