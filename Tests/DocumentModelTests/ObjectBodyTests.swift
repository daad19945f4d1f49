import Testing
import TestSupport
@testable import DocumentModel

/// `ObjectBody(canonical:)` and the scan behind it: bytes are accepted only when the
/// parser reports them canonical, they parse to an object, and re-encoding gives them
/// back; single properties read from the bytes equal the parsed ones.
@Suite struct ObjectBodyTests {
    /// Whatever the bytes, an accepted body is exactly what the parser would store as received.
    private func checkSound(_ bytes: [UInt8]) {
        guard let body = ObjectBody(canonical: bytes) else { return }
        let parsed = try? JSON.parseReportingCanonical(bytes)
        #expect(parsed?.isCanonical == true, "accepted, not canonical: \(String(decoding: bytes, as: UTF8.self))")
        guard let object = parsed?.value.objectValue else {
            Issue.record("accepted, not an object: \(String(decoding: bytes, as: UTF8.self))")
            return
        }
        #expect(JSON.object(object).canonicalBytes() == bytes)
        #expect(body.properties == object)
        for key in object.keys { #expect(body[key] == object[key]) }
        #expect(body.hasUnderscoreKey == object.keys.contains { $0.hasPrefix("_") })
    }

    private func accepts(_ text: String) -> Bool { ObjectBody(canonical: Array(text.utf8)) != nil }

    @Test func acceptsCanonicalObjects() {
        #expect(accepts("{}"))
        #expect(accepts(#"{"a":1,"b":[true,false,null,"x"],"c":{"d":-12}}"#))
        #expect(accepts(#"{"big":1e+300,"tax_rate":0.21,"tiny":1.5e-7,"total":1842.37}"#))
        #expect(accepts(#"{"a":"日本 é \u{1F600}"}"#.replacingOccurrences(of: "\\u{1F600}", with: "\u{1F600}")))
        #expect(accepts(#"{"":0,"a":[],"aa":{}}"#))
    }

    @Test func refusesEverythingElse() {
        #expect(!accepts(""))
        #expect(!accepts("[]"))
        #expect(!accepts("1"))
        #expect(!accepts(#"{"a": 1}"#))  // whitespace
        #expect(!accepts(#" {"a":1}"#))
        #expect(!accepts(#"{"a":1} "#))
        #expect(!accepts(#"{"b":1,"a":2}"#))  // order
        #expect(!accepts(#"{"a":1,"a":2}"#))  // duplicate
        #expect(!accepts(#"{"a":{"c":1,"b":2}}"#))  // nested order
        #expect(!accepts(#"{"a":-0}"#))
        #expect(!accepts(#"{"a":1.0}"#))
        #expect(!accepts(#"{"a":"\n"}"#))  // escapes: left to the parser
        #expect(!accepts(#"{"é":1}"#))  // non-ASCII keys: left to the parser
        #expect(!accepts(#"{"a":{"é":1}}"#))
        #expect(!accepts(#"{"a":1"#))
        #expect(!accepts(#"{"a":1}}"#))
        #expect(!accepts(#"{"a":tru}"#))
        #expect(!accepts("{\"a\":\"\u{1}\"}"))  // bare control character
        #expect(ObjectBody(canonical: [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0x22, 0x7D]) == nil)  // invalid UTF-8
        #expect(ObjectBody(canonical: Array(String(repeating: #"{"a":"#, count: 600).utf8) + [0x31] + Array(repeating: 0x7D, count: 600)) == nil)
    }

    @Test func singlePropertiesComeFromTheBytes() throws {
        let text = #"{"_x":true,"channels":["a","b"],"n":12,"nested":{"k":[1,{"z":null}]}}"#
        let body = try #require(ObjectBody(canonical: Array(text.utf8)))
        #expect(body.canonicalBytes == Array(text.utf8))
        #expect(body["channels"] == ["a", "b"])
        #expect(body["n"] == 12)
        #expect(body["nested"] == ["k": [1, ["z": nil]]])
        #expect(body["missing"] == nil)
        #expect(body["chan"] == nil)
        #expect(body.hasUnderscoreKey)
        #expect(body.properties.keys.sorted() == ["_x", "channels", "n", "nested"])
        #expect(ObjectBody(["a": 1]).canonicalBytes == nil)
    }

    @Test func randomValuesAndMutationsAreSound() {
        var rng = SplitMix64(seed: 11)
        var accepted = 0
        for _ in 0..<3000 {
            var object = [String: JSON]()
            for _ in 0..<rng.int(0...6) {
                object[["a", "b", "_id", "channels", "key", "aa", "z"].randomElement(using: &rng)!] = RandomJSON.value(&rng)
            }
            let canonical = JSON.object(object).canonicalBytes()
            checkSound(canonical)
            if ObjectBody(canonical: canonical) != nil { accepted += 1 }
            for prefix in [canonical.count / 2, canonical.count - 1] where prefix >= 0 {
                #expect(ObjectBody(canonical: Array(canonical.prefix(prefix))) == nil)
            }
            checkSound(RandomJSON.mutated(canonical, &rng))
        }
        // Random strings often hold escapes; plenty are still accepted.
        #expect(accepted > 500)
    }
}
