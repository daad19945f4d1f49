import BLIP
import DocumentModel
import DocumentStore
@testable import Replication
import Testing

/// `changes` entries as Sync Gateway 2 (a boolean) and 3 (flags) write them.
@Suite struct ReplicationMessagesTests {
    typealias Entry = ReplicationMessages.ChangeEntry

    func parse(_ json: JSON) -> Entry? { Entry(json) }

    @Test func flagsAreReadFromBooleansAndNumbers() throws {
        let rev = "2-abc"
        #expect(try #require(parse([1, "d", .string(rev)])).flags == 0)
        #expect(try #require(parse([1, "d", .string(rev), true])).deleted)
        #expect(try #require(parse([1, "d", .string(rev), false])).flags == 0)
        let cases: [(Int64, deleted: Bool, lost: Bool)] = [
            (0, false, false), (1, true, false), (2, false, true), (3, true, true), (4, false, true),
            (5, true, false),  // a tombstone that left a channel is a tombstone
        ]
        for (flags, deleted, lost) in cases {
            let entry = try #require(parse([7, "d", .string(rev), .int(flags)]))
            #expect(entry.deleted == deleted, "flags \(flags)")
            #expect(entry.lostAccess == lost, "flags \(flags)")
        }
        // Out-of-range numbers are clamped, never trusted as bits beyond the three.
        #expect(try #require(parse([1, "d", .string(rev), -3])).flags == 0)
        #expect(try #require(parse([1, "d", .string(rev), 1000])).flags == 7)
        #expect(parse([1, "d"]) == nil)
        #expect(parse([1, 2, .string(rev)]) == nil)
    }

    @Test func entriesRoundTrip() throws {
        let rev = try #require(RevID("3-def"))
        for flags in [0, 1, 2, 3, 4] {
            let entry = Entry(sequence: 9, docID: "doc", revID: rev, flags: flags)
            #expect(Entry(entry.json) == entry)
        }
        // A plain tombstone is written as `true`, as Couchbase Lite and Sync Gateway 2 expect.
        #expect(Entry(sequence: 9, docID: "doc", revID: rev, deleted: true).json == [9, "doc", "3-def", true])
        #expect(Entry(sequence: 9, docID: "doc", revID: rev, flags: 4).json == [9, "doc", "3-def", 4])
    }

    /// A Shoal peer's rows carry the winners' stored vectors beside them, in the
    /// `shoal-vvs` property (`""`: the legacy version alone; `null`: a row without), never
    /// as positional items of the rows, which Couchbase Lite and Sync Gateway read.
    @Test func theWinnersVectorsTravelBesideTheRows() throws {
        let rev = try #require(RevID("3-def"))
        var first = Entry(sequence: 9, docID: "doc", revID: rev, deleted: false)
        first.vector = .stored("18ec@AQgw")
        var second = Entry(sequence: 10, docID: "other", revID: rev, deleted: true)
        second.vector = .stored(nil)
        let third = Entry(sequence: 11, docID: "third", revID: rev, deleted: false)
        #expect(first.json == [9, "doc", "3-def"])
        let property = try #require(ReplicationMessages.rowVectors([first, third, second, third]))
        #expect(property == #"["18ec@AQgw",null,""]"#)
        #expect(ReplicationMessages.rowVectors([third]) == nil)
        var parsed = [first, third, second, third].map { Entry($0.json)! }
        #expect(parsed.allSatisfy { $0.vector == .unknown })
        try ReplicationMessages.applyRowVectors(property, to: &parsed)
        #expect(parsed.map(\.vector) == [.stored("18ec@AQgw"), .unknown, .stored(nil), .unknown])
        for bad in ["[1]", #"["a","b","c","d","e"]"#, "{}", "nope"] {
            var rows = parsed
            #expect(throws: BLIPError.self) { try ReplicationMessages.applyRowVectors(bad, to: &rows) }
        }
        // Extra items in a row are read past, as before.
        #expect(try #require(parse([1, "d", "3-def", false, 12, "18ec@AQgw"])).vector == .unknown)
    }
}
