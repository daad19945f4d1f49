import Testing
@testable import DocumentModel

@Suite struct RevIDTests {
    static let valid: [(String, Int, String)] = [
        ("1-abc", 1, "abc"),
        ("2-0123456789abcdef0123456789abcdef01234567", 2, "0123456789abcdef0123456789abcdef01234567"),
        ("10-A", 10, "A"),
        ("2147483647-z9", 2_147_483_647, "z9"),
        ("3-" + String(repeating: "f", count: 128), 3, String(repeating: "f", count: 128)),
        ("7-MixedCase09", 7, "MixedCase09"),
    ]

    @Test(arguments: valid)
    func parsesValid(text: String, generation: Int, digest: String) throws {
        let rev = try #require(RevID(text))
        #expect(rev.generation == generation)
        #expect(rev.digest == digest)
        #expect(rev.description == text)
        #expect(RevID(rev.description) == rev)
    }

    static let invalid: [String] = [
        "", "-", "1", "1-", "-abc", "0-1", "0-abc", "01-abc", "+1-abc", "-1-abc", " 1-abc", "1-abc ",
        "1 -abc", "1--abc", "1-ab-c", "1-ab_c", "1-ab.c", "1-é", "2147483648-abc", "99999999999999999999-a",
        "1-" + String(repeating: "a", count: 129), "a-abc", "1a-abc", "1-ab\u{0}", "１-abc",
    ]

    @Test(arguments: invalid)
    func rejectsInvalid(text: String) {
        #expect(RevID(text) == nil, "\(text)")
    }

    @Test func ordering() {
        let a = RevID(generation: 2, digest: "abc")
        let b = RevID(generation: 2, digest: "abd")
        let c = RevID(generation: 10, digest: "000")
        let d = RevID(generation: 2, digest: "ab")
        #expect(a < b)
        #expect(b < c)          // generation compares numerically, not as text
        #expect(d < a)          // prefix sorts first
        #expect(!(a < a))
        #expect(RevID(generation: 2, digest: "Z") < RevID(generation: 2, digest: "a"))   // byte order
        #expect([c, a, d, b].sorted() == [d, a, b, c])
    }

    @Test func computeMatchesSpecifiedBytes() {
        // sha1(0x00 (no parent) 0x00 (live) '{"a":1}'), computed independently.
        let root = RevID.compute(parent: nil, deleted: false, canonicalBody: Array(#"{"a":1}"#.utf8))
        #expect(root.description == "1-66c183b8980c2066b2d6ecd701d3823bc0c1b838")
        // sha1(0x05 "1-abc" 0x01 (deleted) "{}").
        let child = RevID.compute(parent: RevID(generation: 1, digest: "abc"), deleted: true, canonicalBody: Array("{}".utf8))
        #expect(child.description == "2-7f8f249c1126ec3a00703b87fa1569504cd4572d")
    }

    @Test func computeIsDeterministic() throws {
        let body1 = try JSON.parse(#"{"b": [1, 2], "a": "x", "_id": "doc", "_rev": "1-abc"}"#).objectValue!
        let body2 = try JSON.parse(#"{ "_rev":"9-zzz", "a":"x","b":[1,2.0] }"#).objectValue!
        let parent = RevID("3-deadbeef")!
        let r1 = RevID.compute(parent: parent, deleted: false, canonicalBody: RevisionBody.digestBody(body1))
        let r2 = RevID.compute(parent: parent, deleted: false, canonicalBody: RevisionBody.digestBody(body2))
        #expect(r1 == r2)
        #expect(r1.generation == 4)
        #expect(r1.digest.count == 40)
        #expect(RevID(r1.description) == r1)
        let deleted = RevID.compute(parent: parent, deleted: true, canonicalBody: RevisionBody.digestBody(body1))
        #expect(deleted != r1)
        let otherParent = RevID.compute(parent: RevID("3-deadbeee")!, deleted: false, canonicalBody: RevisionBody.digestBody(body1))
        #expect(otherParent != r1)
        let noParent = RevID.compute(parent: nil, deleted: false, canonicalBody: RevisionBody.digestBody(body1))
        #expect(noParent.generation == 1)
        #expect(noParent != r1)
        var changed = body1
        changed["a"] = "y"
        #expect(RevID.compute(parent: parent, deleted: false, canonicalBody: RevisionBody.digestBody(changed)) != r1)
    }
}
