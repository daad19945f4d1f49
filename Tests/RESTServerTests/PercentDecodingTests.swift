import Foundation
import Testing

@testable import RESTServer

/// Percent-decoding gives Foundation's answers: decoded text, or nil for a broken escape
/// or bytes that are not UTF-8 (which Foundation sometimes repairs instead).
@Suite struct PercentDecodingTests {
    static let cases: [String] = [
        "", "plain", "doc%20one", "%E2%9C%93", "caf%C3%A9", "%2F%2f", "a%2Bb+c", "%", "%4", "%zz", "ab%g1",
        "%C3", "%FF%FE", "%C3%28", "100%25", "%00", "_local%2Fcheckpoint", "ünïcode", "%e2%9c%93done",
    ]

    @Test(arguments: cases) func sameAsFoundation(text: String) {
        #expect(PercentDecoding.decode(text) == text.removingPercentEncoding)
        #expect(PercentDecoding.decode(Substring(text)) == text.removingPercentEncoding)
    }

    @Test func decodesAndRefuses() {
        #expect(PercentDecoding.decode("doc%20one") == "doc one")
        #expect(PercentDecoding.decode("%E2%9C%93") == "✓")
        #expect(PercentDecoding.decode("bad%2") == nil)
        #expect(PercentDecoding.decode("%C3%28") == nil)
    }

    /// Random byte strings, escaped at random, decode to what Foundation decodes them to.
    @Test func randomStrings() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab%0123456789ABCDEFxyzé+/".unicodeScalars)
        for _ in 0..<2000 {
            let length = Int.random(in: 0...12, using: &generator)
            var text = ""
            for _ in 0..<length { text.unicodeScalars.append(alphabet.randomElement(using: &generator)!) }
            // Foundation sometimes repairs bytes that are not UTF-8 (U+FFFD) and sometimes
            // refuses them; Shoal always refuses them.
            let foundation = text.removingPercentEncoding
            let expected = foundation?.unicodeScalars.contains("\u{FFFD}") == true ? nil : foundation
            #expect(PercentDecoding.decode(text) == expected, "\(text)")
        }
    }
}
