import Testing
import TestSupport
@testable import DocumentModel

@Suite struct CanonicalJSONWriterTests {
    private func canon(_ v: JSON) -> String { v.canonicalString }

    @Test func structuresHaveNoWhitespace() throws {
        let v = try JSON.parse(" { \"b\" : [ 1 , 2 ] , \"a\" : { } , \"c\" : [ ] } ")
        #expect(canon(v) == #"{"a":{},"b":[1,2],"c":[]}"#)
        #expect(canon(.null) == "null")
        #expect(canon(true) == "true")
        #expect(canon(false) == "false")
        #expect(canon(["k": nil]) == #"{"k":null}"#)
    }

    @Test func keysSortedByUTF8Bytes() {
        // U+FF5E (EF BD 9E) sorts before U+1F600 (F0 9F 98 80) by UTF-8 bytes but
        // after it by UTF-16 code units (FF5E vs D83D), the order of JavaScript.
        let v: JSON = ["\u{1F600}": 1, "\u{FF5E}": 2, "b": 3, "B": 4, "a": 5, "aa": 6, "": 7, "é": 8, "z": 9, "_id": 10]
        #expect(canon(v) == "{\"\":7,\"B\":4,\"_id\":10,\"a\":5,\"aa\":6,\"b\":3,\"z\":9,\"é\":8,\"\u{FF5E}\":2,\"\u{1F600}\":1}")
        // Decomposed "é" (65 CC 81) sorts before "f" by bytes; String `<` compares
        // the NFC form (U+E9) and would put it after "f".
        let w: JSON = ["\u{E9}x": 1, "e\u{301}": 2, "f": 3]
        #expect(canon(w) == "{\"e\u{301}\":2,\"f\":3,\"\u{E9}x\":1}")
    }

    @Test func sortOrderIsByteOrderForRandomKeys() {
        var rng = SplitMix64(seed: 9)
        for _ in 0..<300 {
            var o = [String: JSON]()
            for _ in 0..<rng.int(0...12) { o[RandomJSON.string(&rng)] = .int(1) }
            let bytes = JSON.object(o).canonicalBytes()
            guard case .object(let parsed)? = try? JSON.parse(bytes) else {
                Issue.record("unparsable")
                continue
            }
            #expect(parsed.count == o.count)
            let expectedOrder = o.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            var expected = [UInt8]("{".utf8)
            for (i, key) in expectedOrder.enumerated() {
                if i > 0 { expected.append(UInt8(ascii: ",")) }
                JSON.string(key).encode(into: &expected)
                expected += Array(":1".utf8)
            }
            expected.append(UInt8(ascii: "}"))
            #expect(bytes == expected)
        }
    }

    @Test func stringEscapesAreMinimal() {
        #expect(canon("a\"b\\c") == #""a\"b\\c""#)
        #expect(canon("/") == #""/""#)
        #expect(canon("\u{7F}") == "\"\u{7F}\"")
        #expect(canon("é中\u{1F600}") == "\"é中\u{1F600}\"")
        #expect(canon("\u{8}\u{C}\n\r\t") == #""\b\f\n\r\t""#)
        #expect(canon("\u{2028}\u{FFFD}") == "\"\u{2028}\u{FFFD}\"")
    }

    @Test func everyControlCharacter() {
        let short: [UInt8: String] = [0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"]
        for c in UInt8(0)..<0x20 {
            let expected = short[c] ?? "\\u00" + (c < 0x10 ? "0" : "") + String(c, radix: 16)
            #expect(canon(.string("x" + String(Character(Unicode.Scalar(c))) + "y")) == "\"x\(expected)y\"")
        }
        #expect(canon("\u{1F}") == #""\u001f""#)
        #expect(canon("\u{0}") == #""\u0000""#)
    }

    @Test func integers() {
        #expect(canon(0) == "0")
        #expect(canon(.double(-0.0)) == "0")
        #expect(canon(-7) == "-7")
        #expect(canon(.int(.max)) == "9223372036854775807")
        #expect(canon(.int(.min)) == "-9223372036854775808")
        #expect(canon(.double(1.0)) == "1")
        #expect(canon(.double(1e3)) == "1000")
        #expect(canon(.double(1e18)) == "1000000000000000000")
        #expect(canon(.double(-9_223_372_036_854_775_808.0)) == "-9223372036854775808")
    }

    @Test func doubles() {
        #expect(canon(0.1) == "0.1")
        #expect(canon(-1.5) == "-1.5")
        #expect(canon(.double(1e-7)) == "1e-7")
        #expect(canon(.double(1.5e-7)) == "1.5e-7")
        #expect(canon(.double(1e-6)) == "0.000001")
        #expect(canon(.double(0.00001234)) == "0.00001234")
        #expect(canon(.double(1e300)) == "1e+300")
        #expect(canon(.double(-1.5e300)) == "-1.5e+300")
        #expect(canon(.double(9_223_372_036_854_775_808.0)) == "9223372036854776000")   // 2^63 does not fit Int64
        #expect(canon(.double(1e20)) == "100000000000000000000")
        #expect(canon(.double(1e21)) == "1e+21")
        #expect(canon(.double(123.456)) == "123.456")
        #expect(canon(.double(.leastNonzeroMagnitude)) == "5e-324")
        #expect(canon(.double(1.7976931348623157e308)) == "1.7976931348623157e+308")
        #expect(canon(.double(0.30000000000000004)) == "0.30000000000000004")
        #expect(canon(.double(4503599627370495.5)) == "4503599627370495.5")
    }

    @Test func nonFiniteNumbersAreNull() {
        #expect(canon(.double(.nan)) == "null")
        #expect(canon(.double(.infinity)) == "null")
        #expect(canon([.double(-.infinity)]) == "[null]")
    }

    /// Doubles laid out exactly like ECMAScript's Number.prototype.toString
    /// (expected strings produced by Node.js from the same bit patterns).
    static let ecmaScriptTable: [(UInt64, String)] = [
        (0x3fc18258a9d111a0, "0.13679035465078204"),
        (0x1e9a57bc80e6721d, "2.9276755777521917e-161"),
        (0x3da60e7e5c3f42ca, "1.0030187516248711e-11"),
        (0x5647e55ad933f62e, "4.38442029479884e+107"),
        (0x3cb622b40cb38e42, "3.0719260245411294e-16"),
        (0x7ad34039583ab917, "4.472871350414216e+283"),
        (0xbd45eab5ce53fecf, "-1.557284906463524e-13"),
        (0x61571b285c0b9816, "8.12127208518258e+160"),
        (0xbe404a9344b5f864, "-7.586232217716188e-9"),
        (0xf871cac18ae3fd10, "-1.5039079368477342e+272"),
        (0x40b15599d1caf6b6, "4437.600857434494"),
        (0x8258515c9060b81e, "-2.323961389121476e-297"),
        (0xbfadec2a33ddb880, "-0.0584424198449236"),
        (0x24d32d1399489901, "2.701604300144775e-131"),
        (0x3b69d65cb143494c, "1.7097725240093489e-22"),
        (0x3e147a3bf7974d7f, "1.1919460682041161e-9"),
        (0x3e21a8b08ad9f8db, "2.0557716282860564e-9"),
        (0x01cb443cfef6aab3, "5.0893768918862615e-300"),
        (0x3f502042b2a54fab, "0.0009842540117306158"),
        (0x2d1d493910c8ca72, "2.2463725590173604e-91"),
        (0xc21f722dfba58d98, "-33764900585.388275"),
        (0xd14b5abdd461becc, "-4.1516138046170175e+83"),
        (0x44196246fef865fb, "117062557412410440000"),
        (0x28da85de1c3689c3, "6.892915639019552e-112"),
        (0x4489ff6b2a265425, "1.5346350479648873e+22"),
        (0x69745f7fdde0976d, "9.746598570261874e+199"),
        (0xbcb57d333547d2d0, "-2.9822065128486215e-16"),
        (0x87bd64435417833d, "-2.1732411605662698e-271"),
        (0xc0b932930b4323e6, "-6450.574390598549"),
        (0x1b9eddd8a28f5524, "1.2187402369146269e-175"),
        (0x411e597242eb887a, "497244.5653516125"),
        (0xcecec0aa949bef57, "-4.2449332877527974e+71"),
        (0x421692b54b84d0a6, "24237658849.20376"),
        (0x36410cd1d2c8d32a, "2.33322717062236e-47"),
        (0xbf7bf999f84ae09d, "-0.006829835362332085"),
        (0x2982ccc13327e297, "1.000611141421598e-108"),
        (0x3deb2e5a1666c210, "1.9776825593903075e-10"),
        (0x3d1f587a5726a0b7, "2.784050036451853e-14"),
        (0x44ab77eeb84caf24, "6.485812958267185e+22"),
        (0x0315e4bcfb942919, "8.569976039280192e-294"),
        (0x3c315bd42222141c, "9.410173187426322e-19"),
        (0x362c29275a062d88, "9.634185822760697e-48"),
        (0x3d8d964634268b06, "3.363653459433625e-12"),
        (0x430e667e613046d6, "1069617785473242.8"),
        (0xc16a17599bed6cb0, "-13679308.87273249"),
        (0x4f3d53d95603c32f, "5.1817269192188394e+73"),
        (0x447f7b24b2686212, "9.291559673795432e+21"),
        (0x1cf960876f900c18, "4.20265620877532e-169"),
        (0xbcf3a65c17422aa2, "-4.3631415580294545e-15"),
        (0xefa600f5f3d9d861, "-6.672114166936204e+229"),
        (0xc28f4443ecd1ff06, "-4297257228863.878"),
        (0x47df29c0fdb9669b, "1.6569146546112043e+38"),
        (0xc11a151fa5d75a78, "-427335.9119543205"),
        (0x561d310a1e2a4e61, "6.6950803916981354e+106"),
        (0xbe1783beb8c426dc, "-1.3687315474291485e-9"),
        (0xd22f648c6e05a448, "-7.806176438167447e+87"),
        (0xc1f376a22baff27f, "-5224669882.996703"),
        (0x4588a149fa306064, "9.528283300744251e+26"),
        (0xbeeebe6b6ce00be1, "-0.000014659798946331115"),
        (0x845414e592a3364d, "-8.242578116819175e-288"),
    ]

    @Test func matchesECMAScriptNumberToString() throws {
        for (bits, expected) in CanonicalJSONWriterTests.ecmaScriptTable {
            let d = Double(bitPattern: bits)
            #expect(canon(.double(d)) == expected, "\(d)")
            #expect(try JSON.parse(expected).doubleValue?.bitPattern == bits)
        }
    }

    @Test func doublesRoundTripExactly() throws {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<5000 {
            let d = Double(bitPattern: rng.next())
            guard d.isFinite else { continue }
            let bytes = JSON.double(d).canonicalBytes()
            let back = try JSON.parse(bytes)
            #expect(back == JSON.double(d), "\(d)")
            if JSON.exactInt64(d) == nil {
                #expect(back.doubleValue?.bitPattern == (d == 0 ? 0 : d.bitPattern))
            }
            #expect(back.canonicalBytes() == bytes)
        }
    }

    @Test func encodeAppends() {
        var out = Array("prefix:".utf8)
        JSON.array([1, "a"]).encode(into: &out)
        #expect(String(decoding: out, as: UTF8.self) == #"prefix:[1,"a"]"#)
    }
}
