import Testing
@testable import DocumentModel

@Suite struct DigestsTests {
    @Test func hex() {
        #expect(Digests.hex([]) == "")
        #expect(Digests.hex([0x00, 0x0F, 0xA0, 0xFF, 0x5C]) == "000fa0ff5c")
    }

    @Test func hexRoundTrip() {
        #expect(Digests.bytes(fromHex: "000fa0FF5c") == [0x00, 0x0F, 0xA0, 0xFF, 0x5C])
        #expect(Digests.bytes(fromHex: "abc") == nil)
        #expect(Digests.bytes(fromHex: "zz") == nil)
        #expect(Digests.bytes(fromHex: "") == [])
    }

    @Test func attachmentDigest() {
        // sha1("hello") in base64, as Couchbase writes attachment digests.
        #expect(Digests.attachmentDigest(sha1: SHA1.hash(Array("hello".utf8))) == "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=")
        #expect(Digests.attachmentDigest(of: Array("hello".utf8)) == "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=")
        #expect(Digests.attachmentDigest(of: [UInt8]()) == "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=")
    }
}
