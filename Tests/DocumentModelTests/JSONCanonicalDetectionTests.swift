import Foundation
import Testing
import TestSupport
@testable import DocumentModel

/// `JSON.parseReportingCanonical`: a text reported canonical must be exactly the
/// canonical encoding of what it parses to (the store keeps such bodies as received).
@Suite struct JSONCanonicalDetectionTests {
    private func report(_ text: String) throws -> Bool {
        try JSON.parseReportingCanonical(Array(text.utf8)).isCanonical
    }

    /// The property everything relies on: "canonical" implies byte-identical re-encoding.
    private func checkSound(_ bytes: [UInt8]) {
        guard let (value, isCanonical) = try? JSON.parseReportingCanonical(bytes) else { return }
        #expect((try? JSON.parse(bytes)) == value)
        if isCanonical {
            #expect(value.canonicalBytes() == bytes, "reported canonical: \(String(decoding: bytes, as: UTF8.self))")
        }
    }

    @Test func canonicalTexts() throws {
        #expect(try report(#"{"a":1,"b":[true,false,null,"x"],"c":{"d":-12}}"#))
        #expect(try report(#"{"tax_rate":0.21,"total":1842.37,"tiny":1.5e-7,"big":1e+300}"#) == false)  // unsorted
        #expect(try report(#"{"big":1e+300,"tax_rate":0.21,"tiny":1.5e-7,"total":1842.37}"#))
        #expect(try report(#"{"é":"ü","z":"日本"}"#) == false)  // "é" sorts after "z" by UTF-8 bytes
        #expect(try report(#"{"z":"日本","é":"ü"}"#))
        #expect(try report("{}"))
        #expect(try report("[]"))
    }

    @Test func nonCanonicalTexts() throws {
        #expect(try report(#"{"a": 1}"#) == false)  // whitespace
        #expect(try report(" {}") == false)
        #expect(try report(#"{"b":1,"a":2}"#) == false)  // order
        #expect(try report(#"{"a":1,"a":2}"#) == false)  // duplicate
        #expect(try report(#"{"a":-0}"#) == false)
        #expect(try report(#"{"a":1.0}"#) == false)
        #expect(try report(#"{"a":1e2}"#) == false)
        #expect(try report(#"{"a":0.50}"#) == false)
        #expect(try report(#"{"a":"\u0041"}"#) == false)
        #expect(try report(#"{"a":"\n"}"#) == false)  // canonical, but escapes are re-encoded (conservative)
        #expect(try report(#"{"a":{"c":1,"b":2}}"#) == false)  // nested order
        #expect(try report("{\"e\u{301}\":1,\"\u{e9}\":2}") == false)  // equivalent keys merge into one member
    }

    @Test func randomValuesAndMutationsAreSound() {
        var rng = SplitMix64(seed: 7)
        var reportedCanonical = 0
        for _ in 0..<3000 {
            let canonical = RandomJSON.value(&rng).canonicalBytes()
            checkSound(canonical)
            if (try? JSON.parseReportingCanonical(canonical))?.isCanonical == true { reportedCanonical += 1 }
            checkSound(RandomJSON.mutated(canonical, &rng))
        }
        // Most canonical encodings are recognized (those with escapes are not).
        #expect(reportedCanonical > 1000)
    }
}
