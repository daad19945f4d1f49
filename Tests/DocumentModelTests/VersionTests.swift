import Testing
import TestSupport

@testable import DocumentModel

/// `SourceID` and `Version`: text forms, validation, and the versions derived from
/// revision IDs. Expected values come from couchbase-lite-core's
/// LiteCore/tests/VersionVectorTest.cc and Sync Gateway's db/hybrid_logical_vector.go.
@Suite struct VersionTests {
    static let alice = SourceID(base64: "AliceAliceAliceAliceAA")!

    @Test func sourceIDRoundTripsItsBytes() {
        let id = SourceID(bytes: Array(0..<16))!
        #expect(id.base64 == "AAECAwQFBgcICQoLDA0ODw")
        #expect(SourceID(base64: id.base64) == id)
        #expect(id.bytes == Array(0..<16))
        #expect(SourceID(bytes: [1, 2]) == nil)
    }

    // VersionVectorTest.cc "SourceID ASCII": only A, Q, g, w may end the 22 characters.
    @Test func sourceIDRejectsNonCanonicalText() {
        #expect(SourceID(base64: "AAAAAAAAAAAAAAAAAAAAAA") == SourceID.me)
        for bad in ["AAAAAAAAAAAAAAAAAAAAAB", "AAAAAAAAAAAAAAAAAAAAAC", "AAAAAAAAAAAAAAAAAAAAAI", "AAAAAAAAAAAAAAAAAAAAA",
                    "AAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAA=A", "AAAAAAAAAAAAAAAAAAAAA-", "AAAAAAAAAAAAAAAAAAAAAA=="] {
            #expect(SourceID(base64: bad) == nil, "\(bad)")
        }
        #expect(SourceID(base64: "AAAAAAAAAAAAAAAAAAAAAQ")?.low == 1)
    }

    @Test func revisionTreeSourceIsCouchbasesConstant() {
        // SourceID.hh kLegacyRevSourceID.
        #expect(SourceID.revisionTreeEncoding.bytes
            == [0x45, 0xeb, 0xe2, 0xb2, 0x2a, 0x27, 0xf9, 0x3a, 0xde, 0x7b, 0xe1, 0x27, 0x72, 0x87, 0x62, 0x9e])
    }

    @Test func sourceOrderIsByteOrder() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<200 {
            let a = SourceID(high: rng.next() & 0xFF, low: rng.next()), b = SourceID(high: rng.next() & 0xFF, low: rng.next())
            #expect((a < b) == a.bytes.lexicographicallyPrecedes(b.bytes))
        }
    }

    // VersionVectorTest.cc "Version".
    @Test func versionText() throws {
        let v = try Version(parsing: "1@AliceAliceAliceAliceAA")
        #expect(v.time == 1 && v.source == Self.alice)
        #expect(v.description == "1@AliceAliceAliceAliceAA")
        let w = try Version(parsing: "1234@cafebabecafebabecafebA")
        #expect(w.time == 0x1234)
        #expect(try Version(parsing: "3e@*", localSource: Self.alice) == Version(time: 0x3e, source: Self.alice))
        #expect(Version(time: 0x3e, source: Self.alice).text(abbreviating: Self.alice) == "3e@*")
        #expect(try Version(parsing: "7fffffffffffffff@AliceAliceAliceAliceAA").time == 0x7FFF_FFFF_FFFF_FFFF)
        #expect(try Version(parsing: "ffffffffffffffff@AliceAliceAliceAliceAA").time == .max)
    }

    @Test func versionValidation() {
        let cases: [(String, VersionVectorError)] = [
            ("1AliceAliceAliceAliceAA", .malformedVersion("1AliceAliceAliceAliceAA", "no '@'")),
            ("@AliceAliceAliceAliceAA", .malformedVersion("@AliceAliceAliceAliceAA", "no time before '@'")),
            ("0@AliceAliceAliceAliceAA", .malformedVersion("0@AliceAliceAliceAliceAA", "time is 0")),
            ("01@AliceAliceAliceAliceAA", .malformedVersion("01@AliceAliceAliceAliceAA", "time has a leading zero")),
            ("1A@AliceAliceAliceAliceAA", .malformedVersion("1A@AliceAliceAliceAliceAA", "time is not lowercase hex")),
            ("10000000000000000@AliceAliceAliceAliceAA",
             .malformedVersion("10000000000000000@AliceAliceAliceAliceAA", "time longer than 16 hex digits")),
            ("1@*", .relativeSource("1@*")),
            ("1@AAAAAAAAAAAAAAAAAAAAAA", .invalidSourceID("AAAAAAAAAAAAAAAAAAAAAA")),
            ("1@Alice", .invalidSourceID("Alice")),
            ("1@AliceAliceAliceAliceAA ", .invalidSourceID("AliceAliceAliceAliceAA ")),
        ]
        for (text, error) in cases {
            #expect(throws: error) { try Version(parsing: text) }
        }
        #expect(VersionVectorError.relativeSource("1@*").description.contains("'*'"))
    }

    @Test func textRoundTrips() throws {
        var rng = SplitMix64(seed: 11)
        for _ in 0..<500 {
            let v = Version(time: max(1, rng.next() >> UInt64(rng.int(0...63))), source: SourceID(high: rng.next(), low: rng.next() | 1))
            #expect(try Version(parsing: v.description) == v)
        }
    }

    // A `String` first goes through `Version.canonical` (straight from its UTF-8), a
    // `Substring` through the general parser: both read every text alike, valid or not.
    @Test func canonicalFastPathAgreesWithTheGeneralParser() {
        var rng = SplitMix64(seed: 23)
        let alphabet = Array("0123456789abcdefAZaz+/@*, ;".utf8)
        for _ in 0..<2_000 {
            let v = Version(time: max(1, rng.next() >> UInt64(rng.int(0...63))), source: SourceID(high: rng.next(), low: rng.next()))
            var bytes = Array(v.description.utf8)
            if rng.int(0...2) > 0 {  // two thirds mutated: a byte replaced, dropped or added
                let at = rng.int(0...(bytes.count - 1))
                switch rng.int(0...2) {
                case 0: bytes[at] = alphabet[rng.int(0...(alphabet.count - 1))]
                case 1: bytes.remove(at: at)
                default: bytes.insert(alphabet[rng.int(0...(alphabet.count - 1))], at: at)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let fast = Result { () throws(VersionVectorError) in try Version(parsing: text) }
            let general = Result { () throws(VersionVectorError) in try Version(parsing: text[...]) }
            #expect(fast == general, "\(text)")
            let fastVector = Result { () throws(VersionVectorError) in try VersionVector(parsing: text) }
            let generalVector = Result { () throws(VersionVectorError) in try VersionVector(parsing: text[...]) }
            #expect(fastVector == generalVector, "\(text)")
        }
    }

    @Test func sourceIDDecodesEveryBytePattern() {
        var rng = SplitMix64(seed: 29)
        for _ in 0..<1_000 {
            let id = SourceID(high: rng.next(), low: rng.next())
            #expect(SourceID(base64: id.base64) == id)
            #expect(SourceID(base64: id.base64[...]) == id)
        }
    }

    // VersionVectorTest.cc "Legacy Version"; SG LegacyRevToRevTreeEncodedVersion.
    @Test func legacyVersionOfRevisionID() {
        let v = Version.legacy(revID: RevID("12345-e0c8012361e94df6a1e1c2977169480e")!)
        #expect(v.description == "3039e0c8012361@Revision+Tree+Encoding")
        #expect(v.isLegacy && v.legacyGeneration == 12345)
        // A digest shorter than 10 hex digits is padded on the right (Sync Gateway).
        #expect(Version.legacy(revID: RevID("1-abc")!).time == 1 << 40 | 0xabc0000000)
        // Generation 1 starts exactly at the smallest valid clock time.
        #expect(Version.legacy(revID: RevID("1-0000000000")!).time == HybridLogicalClock.minValidTime)
        // Not hex: 40 bits of its SHA-1, still deterministic and of its generation.
        let odd = Version.legacy(revID: RevID("7-Zebra")!)
        #expect(odd == Version.legacy(revID: RevID("7-Zebra")!) && odd.legacyGeneration == 7)
        #expect(odd != Version.legacy(revID: RevID("7-Zebrb")!))
    }

    @Test func derivedVersionIsAPureFunctionOfTheRevision() {
        let rev = RevID("3-6b6d4e0a1fd0ec8d4b4c5a6e2b4f8b9b0c1d2e3f")!
        let v = Version.derived(revID: rev, after: 0x1800_0000_0000_0005)
        #expect(v == Version.derived(revID: rev, after: 0x1800_0000_0000_0005))
        #expect(v.time == 0x1800_0000_0000_0006)
        #expect(v.source == SourceID.derived(fromRevID: rev) && !v.source.isMe && !v.isLegacy)
        #expect(SourceID.derived(fromRevID: RevID("3-6b6d4e0a1fd0ec8d4b4c5a6e2b4f8b9b0c1d2e3e")!) != v.source)
        #expect(Version.derived(revID: rev, after: .max).time == .max)
    }
}
