import Testing
import TestSupport
@testable import DocumentModel

@Suite struct RevisionsJSONTests {
    @Test func encodes() {
        let history = [RevID("3-ccc")!, RevID("2-bbb")!, RevID("1-aaa")!]
        #expect(RevisionsJSON.encode(history).canonicalString == #"{"ids":["ccc","bbb","aaa"],"start":3}"#)
    }

    @Test func roundTripsRandomHistories() {
        var rng = SplitMix64(seed: 21)
        for _ in 0..<300 {
            let start = rng.int(1...5000)
            let n = rng.int(1...min(start, 50))
            let history = (0..<n).map { RevID(generation: start - $0, digest: rng.hexDigest(rng.int(1...40))) }
            let json = RevisionsJSON.encode(history)
            #expect(RevisionsJSON.decode(json) == history)
            #expect(RevisionsJSON.decode(try! JSON.parse(json.canonicalBytes())) == history)
        }
    }

    @Test func decodesStemmedHistory() {
        let decoded = RevisionsJSON.decode(["start": 10, "ids": ["x", "y"]])
        #expect(decoded == [RevID("10-x")!, RevID("9-y")!])
        #expect(RevisionsJSON.decode(["start": .double(2.0), "ids": ["x", "y"]]) == [RevID("2-x")!, RevID("1-y")!])
    }

    static let malformed: [JSON] = [
        nil, [], "x", [:], ["start": 1], ["ids": ["a"]],
        ["start": 0, "ids": ["a"]], ["start": -1, "ids": ["a"]], ["start": 1.5, "ids": ["a"]],
        ["start": "3", "ids": ["a"]], ["start": 1, "ids": []], ["start": 1, "ids": ["a", "b"]],
        ["start": 3, "ids": ["a", 2]], ["start": 3, "ids": ["a", "b-c"]], ["start": 3, "ids": [""]],
        ["start": 3, "ids": "abc"], ["start": .int(Int64(Int32.max) + 1), "ids": ["a"]],
    ]

    @Test(arguments: malformed)
    func rejectsMalformed(json: JSON) {
        #expect(RevisionsJSON.decode(json) == nil, "\(json)")
    }
}
