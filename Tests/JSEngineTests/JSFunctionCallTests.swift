import DocumentModel
import JSEngine
import XCTest

/// Calls: arguments and results of every JSON kind, Unicode, and thrown values.
final class JSFunctionCallTests: XCTestCase {
    func testArgumentsOfEveryKindArrive() throws {
        let f = try JSFunction(source: """
        function(o, a, s, n, d, t, f, z) {
          return [typeof o, o.k, Array.isArray(a), a.length, a[1], s, n + 1, d * 2, t === true, f === false, z === null];
        }
        """)
        let result = try f.call([["k": "v"], [1, "two", [3]], "str", 41, .double(1.25), true, false, .null])
        XCTAssertEqual(result, ["object", "v", true, 3, "two", "str", 42, .double(2.5), true, true, true])
    }

    func testMissingArgumentsAreUndefined() throws {
        let f = try JSFunction(source: "function(a, b) { return [a === null, b === undefined, arguments.length]; }")
        XCTAssertEqual(try f.call([.null]), [true, true, 1])
    }

    func testReturnValues() throws {
        let cases: [(String, JSON)] = [
            ("return undefined;", .null),
            ("", .null),
            ("return null;", .null),
            ("return true;", true),
            ("return 0.5;", .double(0.5)),
            ("return -7;", -7),
            ("return 1e21;", .double(1e21)),
            ("return 0/0;", .null),
            ("return -0;", 0),
            ("return 'x';", "x"),
            ("return [];", []),
            ("return {a: {b: [1, {c: null}]}, d: 'e'};", ["a": ["b": [1, ["c": nil]]], "d": "e"]),
            ("return {skip: undefined, f: function() {}, keep: 1};", ["keep": 1]),
            ("return [undefined, function() {}];", [nil, nil]),
            ("return function() {};", .null),
            ("return new Date(0);", "1970-01-01T00:00:00.000Z"),
        ]
        for (body, expected) in cases {
            let f = try JSFunction(source: "function() { \(body) }")
            XCTAssertEqual(try f.call([]), expected, body)
        }
    }

    func testNestedDocumentRoundTripsUnchanged() throws {
        let doc: JSON = [
            "_id": "doc1", "type": "order", "qty": 3, "price": .double(9.99),
            "tags": ["a", "b"], "owner": ["name": "ann", "roles": ["admin"]], "gone": nil, "ok": true,
        ]
        let f = try JSFunction(source: "function(doc) { return doc; }")
        XCTAssertEqual(try f.call([doc]), doc)
    }

    func testLargeIntegersStayExactUpTo2To53() throws {
        let f = try JSFunction(source: "function(n) { return n; }")
        XCTAssertEqual(try f.call([9_007_199_254_740_992]), 9_007_199_254_740_992)
        XCTAssertEqual(try f.call([-123_456_789_012]), -123_456_789_012)
    }

    func testUnicodeRoundTrips() throws {
        let f = try JSFunction(source: "function(s) { return {s: s, length: s.length, same: s === '\\u00e9\\ud83d\\ude00\\u4e2d'}; }")
        let s = "\u{E9}\u{1F600}\u{4E2D}"
        XCTAssertEqual(try f.call([.string(s)]), ["s": .string(s), "length": 4, "same": true])
        let echo = try JSFunction(source: "function(x) { return x; }")
        for text in ["", "ascii", "caf\u{E9}", "e\u{301}", "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}", "\u{10FFFF}", "\u{2028}\u{0}\u{1F}\"\\", "\u{FFFD}"] {
            XCTAssertEqual(try echo.call([.string(text)]), .string(text))
            XCTAssertEqual(try echo.call([.object([text: .string(text)])]), .object([text: .string(text)]))
        }
    }

    func testNonBMPCharactersMatchTheSameCharactersInTheSource() throws {
        let f = try JSFunction(source: "function(doc) { return [doc.s === '\u{1F600}', doc.s.length, doc['\u{1F600}'] === 1, doc.s.charCodeAt(1)]; }")
        XCTAssertEqual(try f.call([["s": "\u{1F600}", "\u{1F600}": 1]]), [true, 2, true, 0xDE00])
        struct Compass: Error, CustomStringConvertible { var description: String { "bad \u{1F9ED}" } }
        let host = try JSFunction(
            source: "function() { var s = emoji(); try { fail(); } catch (e) { return [s === '\u{1F9ED}', s.length, e.message === 'bad \u{1F9ED}']; } }",
            globals: [
                "emoji": { _, _ in "\u{1F9ED}" },
                "fail": { _, _ in throw Compass() },
            ]
        )
        XCTAssertEqual(try host.call([]), [true, 2, true])
    }

    func testNonBMPCharactersMadeInsideTheScriptBecomeUTF8() throws {
        let f = try JSFunction(source: "function() { return ['\\ud83d\\ude00', String.fromCharCode(0xD83D, 0xDE00) + 'x', 'a\\ud800b', '\\udc00']; }")
        XCTAssertEqual(try f.call([]), ["\u{1F600}", "\u{1F600}x", "a\u{FFFD}b", "\u{FFFD}"])
    }

    func testObjectKeysArriveInCanonicalOrder() throws {
        let f = try JSFunction(source: "function(o) { var k = []; for (var key in o) k.push(key); return k; }")
        XCTAssertEqual(try f.call([["b": 1, "a": 2, "_id": 3, "B": 4]]), ["B", "_id", "a", "b"])
    }

    func testThrownObjectIsReadableAsSyncGatewayDoes() throws {
        let f = try JSFunction(source: "function(doc) { if (!doc.type) throw({forbidden: 'no type'}); return doc.type; }")
        XCTAssertEqual(try f.call([["type": "t"]]), "t")
        XCTAssertThrowsError(try f.call([[:]])) { error in
            let error = error as? JSError
            XCTAssertEqual(error, .thrown(["forbidden": "no type"]))
            XCTAssertEqual(error?.thrownString(forKey: "forbidden"), "no type")
        }
    }

    func testThrownStringsAndErrors() throws {
        let f = try JSFunction(source: """
        function(kind) {
          if (kind === 'string') throw 'plain';
          if (kind === 'error') throw new Error('broken');
          if (kind === 'custom') { var e = new TypeError('bad'); e.status = 409; throw e; }
          if (kind === 'undefined') throw undefined;
          return null.property;
        }
        """)
        func thrown(_ kind: String) -> JSError? {
            do { _ = try f.call([.string(kind)]) } catch { return error }
            return nil
        }
        XCTAssertEqual(thrown("string"), .thrown("plain"))
        XCTAssertEqual(thrown("string")?.message, "plain")
        XCTAssertEqual(thrown("error"), .thrown(["name": "Error", "message": "broken", "lineNumber": 3]))
        XCTAssertEqual(thrown("error")?.message, "Error: broken (line 3)")
        XCTAssertEqual(thrown("custom"), .thrown(["name": "TypeError", "message": "bad", "lineNumber": 4, "status": 409]))
        XCTAssertEqual(thrown("undefined"), .thrown(.null))
        let engine = thrown("engine")?.thrownValue
        XCTAssertEqual(engine?["name"], "TypeError")
        XCTAssertEqual(engine?["lineNumber"], 6)
        XCTAssertFalse(f.isWedged)
        XCTAssertThrowsError(try f.call(["engine"]), "the function still works after exceptions")
    }

    func testUnconvertibleResultIsAThrownTypeError() throws {
        let f = try JSFunction(source: "function() { var a = []; a.push(a); return a; }")
        XCTAssertThrowsError(try f.call([])) { error in
            XCTAssertTrue((error as? JSError)?.message.contains("cyclic") ?? false, "\(error)")
        }
        let g = try JSFunction(source: "function() { var a = {}; a.self = a; throw a; }")
        XCTAssertThrowsError(try g.call([])) { error in
            XCTAssertTrue((error as? JSError)?.message.contains("cyclic") ?? false, "\(error)")
        }
    }

    func testDeepRecursionAndDeepResultsFailCleanly() throws {
        let recursion = try JSFunction(source: "function() { function f(n) { return f(n + 1) + 1; } return f(0); }")
        XCTAssertThrowsError(try recursion.call([])) { error in
            XCTAssertEqual((error as? JSError)?.thrownValue?["name"], "RangeError", "\(error)")
        }
        let deep = try JSFunction(source: "function(n) { var a = []; for (var i = 0; i < n; i++) a = [a]; return a; }")
        XCTAssertNoThrow(try deep.call([100]))
        XCTAssertThrowsError(try deep.call([600]), "deeper than Shoal's JSON parser accepts")
        XCTAssertEqual(try deep.call([1]), [[]])
    }

    func testGlobalsPersistBetweenCalls() throws {
        let f = try JSFunction(source: "function() { if (typeof counter === 'undefined') counter = 0; return ++counter; }")
        XCTAssertEqual(try f.call([]), 1)
        XCTAssertEqual(try f.call([]), 2)
        let g = try JSFunction(source: "function() { return typeof counter; }")
        XCTAssertEqual(try g.call([]), "undefined", "each function has its own heap")
    }

    func testMemoryLimitStopsARunawayAllocation() throws {
        let f = try JSFunction(
            source: "function() { var s = 'xxxxxxxx'; while (true) s = s + s; }",
            options: .init(memoryLimit: 8 << 20)
        )
        XCTAssertThrowsError(try f.call([])) { error in
            XCTAssertEqual((error as? JSError)?.thrownValue?["message"], "alloc failed", "\(error)")
        }
        XCTAssertEqual(try JSFunction(source: "function() { return 1; }", options: .init(memoryLimit: 8 << 20)).call([]), 1)
        XCTAssertFalse(f.isWedged)
    }
}
