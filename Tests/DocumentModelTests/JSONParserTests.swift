import Foundation
import Testing
import TestSupport
@testable import DocumentModel

@Suite struct JSONParserTests {
    @Test func parsesStructures() throws {
        let v = try JSON.parse(" { \"a\" : [1, true, false, null, \"s\", {}, []], \"b\": {\"c\": -2.5} } \n\t\r")
        #expect(v == ["a": [1, true, false, nil, "s", [:], []], "b": ["c": -2.5]])
        #expect(try JSON.parse("true") == true)
        #expect(try JSON.parse("null") == .null)
        #expect(try JSON.parse("\"x\"") == "x")
        #expect(try JSON.parse("  42  ") == 42)
    }

    @Test func duplicateKeysLastWins() throws {
        #expect(try JSON.parse(#"{"a":1,"b":2,"a":3}"#) == ["a": 3, "b": 2])
    }

    static let numberCases: [(String, JSON, Bool)] = [   // text, value, expect .int case
        ("0", .int(0), true), ("-0", .int(0), true), ("-0.0", .int(0), true), ("1", .int(1), true),
        ("1.0", .int(1), true), ("1e3", .int(1000), true), ("1E+3", .int(1000), true), ("10e-1", .int(1), true),
        ("1.5", .double(1.5), false), ("-1.5", .double(-1.5), false), ("0.1", .double(0.1), false),
        ("1e-7", .double(1e-7), false), ("1e300", .double(1e300), false), ("1e18", .double(1e18), false),
        ("1000000000000000000", .int(1_000_000_000_000_000_000), true),
        ("9223372036854775807", .int(.max), true), ("-9223372036854775808", .int(.min), true),
        ("9223372036854775808", .double(9_223_372_036_854_775_808.0), false),
        ("-9223372036854775809", .double(-9_223_372_036_854_775_809.0), false),
        ("123456789012345678901234", .double(123_456_789_012_345_678_901_234.0), false),
        ("9007199254740992.0", .int(9_007_199_254_740_992), true),
        ("2.2250738585072014e-308", .double(2.2250738585072014e-308), false),
        ("4.9e-324", .double(.leastNonzeroMagnitude), false), ("1.7976931348623157e308", .double(1.7976931348623157e308), false),
        ("0.30000000000000004", .double(0.30000000000000004), false), ("3.141592653589793", .double(3.141592653589793), false),
        ("1e-400", .int(0), true), ("0e999999999999", .int(0), true),
    ]

    @Test(arguments: numberCases)
    func numbers(text: String, expected: JSON, isInt: Bool) throws {
        let v = try JSON.parse(text)
        #expect(v == expected, "\(text)")
        if case .int = v { #expect(isInt, "\(text) parsed as .int") } else { #expect(!isInt, "\(text) parsed as .double") }
        if case .double(let d) = v, case .double(let e) = expected { #expect(d.bitPattern == e.bitPattern, "\(text)") }
    }

    @Test func numbersAgreeWithStandardLibrary() throws {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<3000 {
            var text = rng.chance(0.5) ? "-" : ""
            let intDigits = rng.int(1...22)
            text += rng.chance(0.3) ? "0" : String(rng.int(1...9)) + digits(intDigits - 1, &rng)
            if rng.chance(0.6) { text += "." + digits(rng.int(1...25), &rng) }
            if rng.chance(0.5) { text += ["e", "E"].randomElement(using: &rng)! + ["", "+", "-"].randomElement(using: &rng)! + String(rng.int(0...330)) }
            let expected = Double(text)!
            guard expected.isFinite else {
                #expect(throws: JSONError.self) { try JSON.parse(text) }
                continue
            }
            let v = try JSON.parse(text)
            #expect(v.doubleValue == expected, "\(text)")
        }
    }

    private func digits(_ n: Int, _ rng: inout SplitMix64) -> String {
        String((0..<max(0, n)).map { _ in "0123456789".randomElement(using: &rng)! })
    }

    @Test func stringEscapes() throws {
        #expect(try JSON.parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{8}\u{C}\n\r\t"))
        #expect(try JSON.parse(#""\u0041\u00e9\u4E2D\u0000""#) == .string("Aé中\u{0}"))
        #expect(try JSON.parse(#""\ud83d\ude00""#) == .string("\u{1F600}"))
        #expect(try JSON.parse(#""x\uD83D\uDE00y""#) == .string("x\u{1F600}y"))
        #expect(try JSON.parse("\"\u{1F600}中é\"") == .string("\u{1F600}中é"))
    }

    @Test func loneSurrogatesBecomeReplacementCharacter() throws {
        #expect(try JSON.parse(#""\ud83d""#) == .string("\u{FFFD}"))
        #expect(try JSON.parse(#""\ude00""#) == .string("\u{FFFD}"))
        #expect(try JSON.parse(#""\ud83dx""#) == .string("\u{FFFD}x"))
        #expect(try JSON.parse(#""\ud83d\u0041""#) == .string("\u{FFFD}A"))
        #expect(try JSON.parse(#""\ud83d\ud83d\ude00""#) == .string("\u{FFFD}\u{1F600}"))
        #expect(try JSON.parse(#""\ude00\ud83d""#) == .string("\u{FFFD}\u{FFFD}"))
    }

    static let errorCases: [([UInt8], Int, String)] = [
        (Array("".utf8), 0, "unexpected end of input"),
        (Array("   ".utf8), 3, "unexpected end of input"),
        (Array("tru".utf8), 3, "unexpected end of input"),
        (Array("trux".utf8), 3, "unexpected character 'x' at offset 3"),
        (Array("[1,]".utf8), 3, "unexpected character ']' at offset 3"),
        (Array("[1 2]".utf8), 3, "unexpected character '2' at offset 3"),
        (Array("01".utf8), 0, "leading zero"),
        (Array("-01".utf8), 1, "leading zero"),
        (Array("[00]".utf8), 1, "leading zero"),
        (Array("1 2".utf8), 2, "trailing characters after JSON value"),
        (Array("{} x".utf8), 3, "trailing characters after JSON value"),
        (Array("\"abc".utf8), 0, "unterminated string"),
        (Array("[\"a\\".utf8), 1, "unterminated string"),
        (Array("\"\\u12".utf8), 0, "unterminated string"),
        ([0x22, 0x61, 0x01, 0x22], 2, "control character"),
        ([0x22, 0x0A, 0x22], 1, "control character"),
        (Array(#""\x""#.utf8), 1, "invalid escape '\\x'"),
        (Array(#""\u12G4""#.utf8), 1, "invalid \\u escape"),
        (Array(#""\u12""#.utf8), 1, "invalid \\u escape"),
        ([0x22, 0xC0, 0xAF, 0x22], 1, "invalid UTF-8"),
        ([0x22, 0xED, 0xA0, 0x80, 0x22], 1, "invalid UTF-8"),
        ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 1, "invalid UTF-8"),
        ([0x22, 0xE0, 0x80, 0x80, 0x22], 1, "invalid UTF-8"),
        ([0x22, 0x61, 0xE2, 0x82], 2, "invalid UTF-8"),
        ([0x22, 0xFF, 0x22], 1, "invalid UTF-8"),
        ([0x22, 0x80, 0x22], 1, "invalid UTF-8"),
        ([0xEF, 0xBB, 0xBF, 0x31], 0, "unexpected byte 0xEF at offset 0"),
        (Array("1.".utf8), 2, "unexpected end of input"),
        (Array("1.x".utf8), 2, "unexpected character 'x' at offset 2"),
        (Array("1e".utf8), 2, "unexpected end of input"),
        (Array("[1e+]".utf8), 4, "unexpected character ']' at offset 4"),
        (Array("-".utf8), 1, "unexpected end of input"),
        (Array("-a".utf8), 1, "unexpected character 'a' at offset 1"),
        (Array("+1".utf8), 0, "unexpected character '+' at offset 0"),
        (Array(".5".utf8), 0, "unexpected character '.' at offset 0"),
        (Array("{\"a\" 1}".utf8), 5, "unexpected character '1' at offset 5 (expected ':')"),
        (Array("{1:2}".utf8), 1, "unexpected character '1' at offset 1"),
        (Array("{\"a\":1,}".utf8), 7, "unexpected character '}' at offset 7"),
        (Array("{\"a\":1".utf8), 6, "unexpected end of input"),
        (Array("1e400".utf8), 0, "number out of range"),
        (Array("[-1e99999]".utf8), 1, "number out of range"),
        (Array("NaN".utf8), 0, "unexpected character 'N' at offset 0"),
        (Array("Infinity".utf8), 0, "unexpected character 'I'"),
        (Array("nulL".utf8), 3, "unexpected character 'L' at offset 3"),
        (Array("'a'".utf8), 0, "unexpected character '''"),
    ]

    @Test(arguments: errorCases)
    func errors(input: [UInt8], offset: Int, reason: String) {
        do {
            let v = try JSON.parse(input)
            Issue.record("parsed \(v) from \(input)")
        } catch {
            #expect(error.offset == offset, "\(error)")
            #expect(error.reason.contains(reason), "\(error.reason)")
            #expect(error.description == error.reason)
        }
    }

    @Test func errorMessageFormat() {
        #expect(throws: JSONError(offset: 12, reason: "unexpected character 'x' at offset 12 (expected ',' or ']')")) {
            try JSON.parse(#"{"ab": [1, 2x]}"#)
        }
    }

    @Test func nestingLimit() throws {
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(try JSON.parse(ok).arrayValue != nil)
        let objects = String(repeating: "{\"a\":", count: 512) + "1" + String(repeating: "}", count: 512)
        #expect(try JSON.parse(objects).objectValue != nil)
        let tooDeep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(throws: JSONError.self) { try JSON.parse(tooDeep) }
        do {
            _ = try JSON.parse(String(repeating: "[", count: 100_000))
            Issue.record("should fail")
        } catch {
            #expect(error.reason.contains("nesting too deep"))
            #expect(error.offset == 512)
        }
    }

    @Test func acceptsEveryContainerKind() throws {
        let text = #"xx{"k":[1,2]}"#
        let expected: JSON = ["k": [1, 2]]
        let bytes = Array(text.utf8)
        #expect(try JSON.parse(bytes[2...]) == expected)
        #expect(try JSON.parse(Data(bytes[2...])) == expected)
        #expect(try JSON.parse(data: Data(bytes.dropFirst(2))) == expected)
        #expect(try JSON.parse(bytes.dropFirst(2).lazy.map { $0 }) == expected)
        #expect(try JSON.parse(String(text.dropFirst(2))) == expected)
        #expect(try JSON.parse(text.utf8.dropFirst(2)) == expected)
        // Offsets are relative to the start of the slice.
        #expect(throws: JSONError(offset: 1, reason: "unexpected character 'x' at offset 1 (expected a JSON value)")) {
            try JSON.parse(Array("[[x".utf8)[1...])
        }
    }
}
