import Testing
@testable import DocumentModel

@Suite struct JSONTests {
    @Test func numberNormalization() {
        #expect(JSON.number(1.0) == .int(1))
        if case .int(let i) = JSON.number(-0.0) { #expect(i == 0) } else { Issue.record("-0.0 not .int") }
        if case .double = JSON.number(1.5) {} else { Issue.record("1.5 should stay .double") }
        if case .int(let i) = JSON.number(9_007_199_254_740_992) { #expect(i == 1 << 53) } else { Issue.record("2^53") }
        if case .double = JSON.number(18_014_398_509_481_984) {} else { Issue.record("2^54 should stay .double") }
        if case .double = JSON.number(1e300) {} else { Issue.record("1e300 should stay .double") }
        if case .double(let d) = JSON.number(.nan) { #expect(d.isNaN) } else { Issue.record("NaN") }
    }

    @Test func intAndDoubleCompareByValue() {
        #expect(JSON.int(1) == JSON.double(1.0))
        #expect(JSON.double(1.0) == JSON.int(1))
        #expect(JSON.int(1) != JSON.double(1.5))
        #expect(JSON.int(0) == JSON.double(-0.0))
        // Double(Int64.max) is 2^63, which is not Int64.max.
        #expect(JSON.int(.max) != JSON.double(9_223_372_036_854_775_808.0))
        #expect(JSON.int(.min) == JSON.double(-9_223_372_036_854_775_808.0))
        #expect(JSON.double(.nan) == JSON.double(.nan))
        #expect(JSON.int(2) != JSON.string("2"))
        var set = Set<JSON>()
        set.insert(.int(7))
        #expect(set.contains(.double(7.0)))
        #expect(!set.contains(.double(7.5)))
        #expect(JSON.array([.int(1), .double(2)]).hashValue == JSON.array([.double(1), .int(2)]).hashValue)
    }

    @Test func objectEqualityAndHashIgnoreOrder() {
        let a: JSON = ["x": 1, "y": [true, nil], "z": "s"]
        let b: JSON = .object(["z": "s", "y": .array([.bool(true), .null]), "x": .double(1)])
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        let c: JSON = ["x": 1, "y": [true, nil], "z": "t"]
        #expect(a != c)
        #expect(JSON.object([:]) != JSON.array([]))
        #expect(JSON.object(["a": 1]) != JSON.object(["a": 1, "b": 2]))
    }

    @Test func stringsCompareByBytesNotCanonicalEquivalence() {
        let composed = JSON.string("\u{E9}")
        let decomposed = JSON.string("e\u{301}")
        #expect(composed != decomposed)
        #expect(composed.canonicalBytes() != decomposed.canonicalBytes())
    }

    @Test func accessors() {
        let doc: JSON = ["name": "n", "n": 3, "f": 2.5, "ok": true, "list": [1, "two"], "nothing": nil, "big": .double(1e18)]
        #expect(doc["name"]?.stringValue == "n")
        #expect(doc["n"]?.intValue == 3)
        #expect(doc["n"]?.doubleValue == 3.0)
        #expect(doc["f"]?.doubleValue == 2.5)
        #expect(doc["f"]?.intValue == nil)
        #expect(doc["big"]?.intValue == 1_000_000_000_000_000_000)
        #expect(doc["ok"]?.boolValue == true)
        #expect(doc["list"]?[1]?.stringValue == "two")
        #expect(doc["list"]?[2] == nil)
        #expect(doc["list"]?[-1] == nil)
        #expect(doc["nothing"]?.isNull == true)
        #expect(doc["missing"] == nil)
        #expect(doc["name"]?["x"] == nil)
        #expect(doc[0] == nil)
        #expect(doc.objectValue?.count == 7)
        #expect(doc["list"]?.arrayValue?.count == 2)
        #expect(doc["name"]?.intValue == nil)
        #expect(JSON.double(1e300).intValue == nil)
        #expect(JSON.double(.infinity).intValue == nil)
        #expect(doc["n"]?.isNumber == true)
        #expect(doc["name"]?.isNumber == false)
    }

    @Test func literals() {
        let v: JSON = ["a": [1, 2.0, 2.5, "s", true, nil], "a2": [:]]
        guard case .object(let o) = v, case .array(let items)? = o["a"] else {
            Issue.record("literal structure")
            return
        }
        if case .int(2) = items[1] {} else { Issue.record("2.0 literal should normalize to .int(2)") }
        if case .double(2.5) = items[2] {} else { Issue.record("2.5 literal should be .double") }
        #expect(items[5] == .null)
        #expect(o["a2"] == .object([:]))
        let duplicate = JSON(dictionaryLiteral: ("k", 1), ("k", 2))
        #expect(duplicate == ["k": 2])
    }

    @Test func descriptionIsCanonical() {
        let v: JSON = ["b": 1, "a": [true, nil, "x"]]
        #expect(v.description == #"{"a":[true,null,"x"],"b":1}"#)
        #expect("\(v)" == v.canonicalString)
    }
}
