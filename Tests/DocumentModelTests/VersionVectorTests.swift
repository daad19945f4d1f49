import Testing
import TestSupport

@testable import DocumentModel

/// Hand-written cases for `VersionVector`: the text forms Couchbase Lite 4 and Sync
/// Gateway 4 send, validation, comparison, edits, merges and pruning. Cases marked
/// "CBL" are taken from couchbase-lite-core's LiteCore/tests/VersionVectorTest.cc,
/// "SG" from Sync Gateway's db/hybrid_logical_vector.go (`extractHLVFromBlipString`).
@Suite struct VersionVectorTests {
    static let alice = "AliceAliceAliceAliceAA", bob = "BobBobBobBobBobBobBobA", carol = "CarolCarolCarolCarolCA"
    static let dave = "DaveDaveDaveDaveDaveDA", zegpold = "ZegpoldZegpoldZegpoldA"
    static let me = SourceID(base64: zegpold)!

    static func vv(_ text: String) throws -> VersionVector { try VersionVector(parsing: text, localSource: me) }

    // CBL "VersionVector <-> String".
    @Test func couchbaseLiteText() throws {
        let v = try Self.vv("3@*; 2@\(Self.alice),  1@\(Self.dave),2@\(Self.carol)")
        #expect(v.current.description == "3@\(Self.zegpold)" && v.merges.isEmpty && v.previous.count == 3)
        // Canonical order (newer first, then by source) instead of the order received.
        #expect(v.description == "3@\(Self.zegpold); 2@\(Self.alice), 2@\(Self.carol), 1@\(Self.dave)")
        #expect(v.text(abbreviating: Self.me) == "3@*; 2@\(Self.alice), 2@\(Self.carol), 1@\(Self.dave)")

        let merge = try Self.vv("4@\(Self.bob), 3@\(Self.alice), 2@\(Self.bob); 1@\(Self.carol)")
        #expect(merge.merges.map(\.description) == ["3@\(Self.alice)", "2@\(Self.bob)"])
        #expect(merge.previous.map(\.description) == ["1@\(Self.carol)"])

        let noPrevious = try Self.vv("4@*, 2@\(Self.alice), 1@\(Self.dave);")
        #expect(noPrevious.merges.count == 2 && noPrevious.description.hasSuffix(";"))
        #expect(try Self.vv("4@*, 2@\(Self.alice), 1@\(Self.dave)") == noPrevious)
        #expect(try Self.vv("1@\(Self.dave);").description == "1@\(Self.dave)")
        #expect(try Self.vv("1@\(Self.dave); ").description == "1@\(Self.dave)")
    }

    // SG formats 1–4 of extractHLVFromBlipString, written without spaces.
    @Test func syncGatewayText() throws {
        for text in ["1@\(Self.alice)", "2@\(Self.alice);1@\(Self.bob)", "3@\(Self.alice),2@\(Self.bob);1@\(Self.carol)",
                     "3@\(Self.alice),2@\(Self.bob),1@\(Self.carol);"] {
            let v = try Self.vv(text)
            #expect(v.text(style: .syncGateway) == text)
            #expect(try Self.vv(v.description) == v)
        }
        #expect(try Self.vv("3@\(Self.alice),2@\(Self.bob),1@\(Self.carol)").merges.count == 2)
    }

    // SG formats 5–10 and VersionVecWithLegacy: revision IDs end a history.
    @Test func legacyRevisionIDsEndAHistory() throws {
        let a = "5@\(Self.alice)", b = "4@\(Self.bob)", c = "3@\(Self.carol)"
        let cases: [(String, Int, Int, [String])] = [
            ("\(a),1-abc", 0, 0, ["1-abc"]), ("\(a),1-def,1-abc", 0, 0, ["1-def", "1-abc"]),
            ("\(a),\(b),\(c);1-abc", 2, 0, ["1-abc"]), ("\(a),\(b),\(c);2@\(Self.dave),1-abc", 2, 1, ["1-abc"]),
            ("\(a);\(b),2-def, 1-abc", 0, 1, ["2-def", "1-abc"]),
        ]
        for (text, merges, previous, legacy) in cases {
            let (v, revs) = try VersionVector.parseHistory(text)
            #expect(v.merges.count == merges && v.previous.count == previous && revs.map(\.description) == legacy, "\(text)")
            #expect(try VersionVector.parseHistory(v.text(legacy: revs)) == (v, revs))
        }
        #expect(throws: VersionVectorError.misplacedRevID("1-abc")) { try VersionVector(parsing: "\(a),1-abc") }
        #expect(throws: VersionVectorError.misplacedRevID("1-abc")) { try VersionVector.parseHistory("\(a),1-abc,\(b)") }
        #expect(throws: VersionVectorError.misplacedRevID("1-abc")) { try VersionVector.parseHistory("\(a),1-abc;\(b)") }
        #expect(throws: VersionVectorError.misplacedRevID("1-abc")) { try VersionVector.parseHistory("1-abc") }
    }

    // Pusher+Revs.cc / RevToInsert::history / GetHLVFromRevMessage.
    @Test func revMessageProperties() throws {
        let plain = try Self.vv("5@\(Self.alice); 3@\(Self.bob), 1@\(Self.carol)")
        #expect(plain.historyText() == "3@\(Self.bob), 1@\(Self.carol)")
        let merge = try Self.vv("5@\(Self.alice), 4@\(Self.bob); 1@\(Self.carol)")
        #expect(merge.historyText(style: .syncGateway) == "4@\(Self.bob);1@\(Self.carol)")
        let mergeOnly = try Self.vv("5@\(Self.alice), 4@\(Self.bob);")
        #expect(mergeOnly.historyText() == "4@\(Self.bob);")
        #expect(VersionVector(mergeOnly.current).historyText() == nil)
        let legacy = [RevID("2-def")!, RevID("1-abc")!]
        for v in [plain, merge, mergeOnly, VersionVector(plain.current)] {
            for style in [VersionVector.TextStyle.couchbaseLite, .syncGateway] {
                let parsed = try VersionVector.parseRevMessage(rev: v.current.description,
                                                               history: v.historyText(style: style, legacy: legacy))
                #expect(parsed.vector == v && parsed.legacy == legacy)
            }
        }
        #expect(try VersionVector.parseRevMessage(rev: plain.current.description, history: nil).vector == VersionVector(plain.current))
    }

    @Test func contradictoryVectorsAreErrors() {
        let a = Self.alice, b = Self.bob
        let cases: [(String, VersionVectorError)] = [
            ("", .empty), (",1@\(a)", .emptyEntry(",1@\(a)")), ("1@\(a),", .emptyEntry("1@\(a),")),
            ("1@\(a),,2@\(b)", .emptyEntry("1@\(a),,2@\(b)")), ("1@\(a);2@\(b);", .multipleSemicolons("1@\(a);2@\(b);")),
            ("2@\(a);1@\(a)", .duplicateSource(SourceID(base64: a)!)),            // current source among previous
            ("3@\(b);2@\(a),1@\(a)", .duplicateSource(SourceID(base64: a)!)),     // SG: twice in pv
            ("3@\(b),2@\(a),1@\(a);", .duplicateSource(SourceID(base64: a)!)),    // SG: twice in mv
            ("3@\(b),2@\(a);1@\(a)", .duplicateSource(SourceID(base64: a)!)),     // SG: in pv and mv
            ("3@\(b),2@\(b),1@\(b);", .duplicateSource(SourceID(base64: b)!)),    // CBL: current source twice in mv
            ("3@\(b),3@\(b);", .mergeVersionNotOlder(current: try! Version(parsing: "3@\(b)"), merge: try! Version(parsing: "3@\(b)"))),
            ("3@\(b),4@\(b);", .mergeVersionNotOlder(current: try! Version(parsing: "3@\(b)"), merge: try! Version(parsing: "4@\(b)"))),
        ]
        for (text, error) in cases {
            #expect(throws: error, "\(text)") { try VersionVector(parsing: text) }
        }
    }

    /// A text of one version takes a path of its own (no lists): it must give what the
    /// general grammar gives, errors included.
    @Test func oneVersionParsesAsTheGeneralGrammarDoes() throws {
        let a = Self.alice
        for text in ["1@\(a)", "  18ec2ac866c30000@\(a)", "ffffffffffffffff@\(Self.bob)"] {
            // `cv;` is the same vector through the general path (a merge list with no merges).
            #expect(try VersionVector(parsing: text) == VersionVector(parsing: text + ";"), "\(text)")
            #expect(try VersionVector(parsing: text).count == 1)
        }
        #expect(try Self.vv("7@*") == VersionVector(Version(time: 7, source: Self.me)))
        let cases: [(String, VersionVectorError)] = [
            ("", .empty), ("   ", .emptyEntry("   ")), ("1-abc", .misplacedRevID("1-abc")),
            ("0@\(a)", .malformedVersion("0@\(a)", "time is 0")), ("1@\(a)x", .invalidSourceID("\(a)x")),
            ("1@AAAAAAAAAAAAAAAAAAAAAA", .invalidSourceID("AAAAAAAAAAAAAAAAAAAAAA")),
            ("1@AliceAliceAliceAliceAB", .invalidSourceID("AliceAliceAliceAliceAB")),
            ("1A@\(a)", .malformedVersion("1A@\(a)", "time is not lowercase hex")),
        ]
        for (text, error) in cases {
            #expect(throws: error, "\(text)") { try VersionVector(parsing: text) }
        }
        // The source decodes to the same two words as its bytes say.
        let source = try #require(SourceID(base64: Self.carol))
        #expect(SourceID(bytes: source.bytes) == source && source.base64 == Self.carol)
    }

    // CBL "VersionVector comparison" (no ';' means every version is current or merge).
    @Test func comparison() throws {
        let c1 = try Self.vv("1@\(Self.carol)"), d1 = try Self.vv("1@\(Self.dave), 2@\(Self.carol)")
        let c2 = try Self.vv("2@\(Self.carol)"), z4 = try Self.vv("4@\(Self.zegpold), 1@\(Self.carol)")
        #expect(c1.compare(to: c1) == .same)
        #expect(c1.compare(to: d1) == .older && d1.compare(to: c1) == .newer)
        #expect(c2.compare(to: d1) == .older && c2.compare(to: c1) == .newer)
        #expect(d1.compare(to: z4) == .conflicting && z4.compare(to: d1) == .conflicting)
        #expect(z4.compare(to: c1) == .newer && z4.compare(to: c2) == .conflicting)
        #expect(d1.dominates(c1) && d1.dominates(d1) && !c1.dominates(d1) && !z4.dominates(c2))
    }

    // CBL "VersionVector conflicts".
    @Test func conflictsAndMerge() throws {
        let (a, c, d) = (Self.alice, Self.carol, Self.dave)
        let v1 = try Self.vv("6@*;2@\(a),1@\(d),2@\(c)")
        #expect(v1.compare(to: try Self.vv("5@*;2@\(a),1@\(d),2@\(c)")) == .newer)
        #expect(v1.compare(to: try Self.vv("2@\(a);1@\(d),2@\(c)")) == .newer)
        #expect(v1.compare(to: try Self.vv("1@\(c)")) == .newer)
        #expect(v1.compare(to: try Self.vv("2@\(d);6@*,2@\(a),2@\(c)")) == .older)
        #expect(v1.compare(to: try Self.vv("2@\(d);1@666666666666666666666A,6@*,2@\(a),9@\(c)")) == .older)
        let v3 = try Self.vv("4@\(a);1@\(d),2@\(c)")
        #expect(v1.compare(to: v3) == .conflicting)
        let v13 = try VersionVector.merged([v1, v3], as: Version(time: 7, source: Self.me))
        #expect(v13.text(abbreviating: Self.me) == "7@*, 6@*, 4@\(a); 2@\(c), 1@\(d)")
        #expect(v13.compare(to: v1) == .newer && v13.compare(to: v3) == .newer)
        #expect(try VersionVector.merged([v3, v1, v3], as: Version(time: 7, source: Self.me)) == v13)
        // CBL "VersionVector all-conflicts".
        let v12 = try VersionVector.merged([try Self.vv("1@\(a)"), try Self.vv("2@\(Self.bob)")], as: Version(time: 3, source: Self.me))
        #expect(v12.text(abbreviating: Self.me) == "3@*, 2@\(Self.bob), 1@\(a);")
        #expect(try Self.vv(v12.description) == v12)
        // Merging a revision with its own ancestor is a plain edit.
        let plain = try VersionVector.merged([v1, try Self.vv("1@\(c)")], as: Version(time: 7, source: Self.me))
        #expect(plain == (try v1.adding(Version(time: 7, source: Self.me))))
        #expect(throws: VersionVectorError.notNewer(Version(time: 6, source: Self.me), existing: 6)) {
            try VersionVector.merged([v1, v3], as: Version(time: 6, source: Self.me))
        }
    }

    // CBL "VersionVector update merge with two by me / by other", "VersionVector authors".
    @Test func localEdits() throws {
        let (a, c, d, z) = (Self.alice, Self.carol, Self.dave, Self.zegpold)
        let byMe = try Self.vv("7@*, 6@*, 4@\(a); 2@\(c), 1@\(d)")
        #expect(try byMe.addingLocalEdit(source: Self.me, time: 8).text(abbreviating: Self.me) == "8@*; 4@\(a), 2@\(c), 1@\(d)")
        let byOther = try VersionVector(parsing: "7@\(z), 6@\(z), 4@\(a); 2@\(c), 1@\(d)")
        let edited = try byOther.addingLocalEdit(source: SourceID(base64: Self.bob)!, time: 1)
        #expect(edited.description == "1@\(Self.bob); 7@\(z), 4@\(a), 2@\(c), 1@\(d)")
        #expect(edited.compare(to: byOther) == .newer)
        #expect(throws: VersionVectorError.notNewer(Version(time: 4, source: SourceID(base64: a)!), existing: 4)) {
            try byOther.addingLocalEdit(source: SourceID(base64: a)!, time: 4)
        }
    }

    // CBL "VersionVector prune".
    @Test func pruning() throws {
        let v = try Self.vv("7@\(Self.zegpold); 6@\(Self.dave), 5@\(Self.bob), 3@\(Self.alice), 1@\(Self.carol)")
        #expect(v.pruned(keepingAtMost: 999) == v)
        #expect(v.pruned(keepingAtMost: 0).description == "7@\(Self.zegpold)")
        #expect(v.pruned(keepingAtMost: 3).description == "7@\(Self.zegpold); 6@\(Self.dave), 5@\(Self.bob)")
        #expect(v.pruned(keepingAtMost: 2, olderThan: 4).description == "7@\(Self.zegpold); 6@\(Self.dave), 5@\(Self.bob)")
        let merge = try Self.vv("9@\(Self.zegpold), 6@\(Self.dave), 5@\(Self.bob); 3@\(Self.alice), 1@\(Self.carol)")
        #expect(merge.pruned(keepingAtMost: 1).description == "9@\(Self.zegpold), 6@\(Self.dave), 5@\(Self.bob);")
    }

    @Test func historyOfTheSameRevision() throws {
        let (a, b, c) = (Self.alice, Self.bob, Self.carol)
        let short = try Self.vv("5@\(a); 3@\(b)"), long = try Self.vv("5@\(a); 2@\(b), 4@\(c)")
        #expect(try short.withHistory(of: [long]).description == "5@\(a); 4@\(c), 3@\(b)")
        // The same revision ID written on two nodes got two versions: the greater names it.
        let onA = try Self.vv("9@\(a); 3@\(c)"), onB = try Self.vv("8@\(b); 3@\(c)")
        let one = try VersionVector.reconciling([onB, onA])
        #expect(one.description == "9@\(a); 8@\(b), 3@\(c)")
        #expect(one.compare(to: onA) == .same && one.compare(to: onB) == .newer)
        #expect(throws: VersionVectorError.noVectors) { try VersionVector.reconciling([]) }
    }
}
