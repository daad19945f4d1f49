import DocumentModel
import JSEngine
import Synchronization
import XCTest

/// Host functions: arguments, return values, errors in both directions, per-call context.
final class JSHostFunctionTests: XCTestCase {
    /// Collects host calls; the lock makes it Sendable (calls arrive on the worker thread).
    final class Recorder: Sendable {
        private let calls = Mutex<[(String, [JSON])]>([])

        func record(_ name: String, _ arguments: [JSON]) {
            calls.withLock { $0.append((name, arguments)) }
        }

        var all: [(String, [JSON])] { calls.withLock { $0 } }

        func host(_ name: String, returning value: JSON? = nil) -> HostFunction {
            { [self] arguments, _ in
                record(name, arguments)
                return value
            }
        }
    }

    func testHostFunctionsReceiveTheirArguments() throws {
        let recorder = Recorder()
        let f = try JSFunction(
            source: """
            function(doc) {
              channel("a", "b");
              channel(doc.channels);
              access(doc.owner, ["c1", "c2"]);
              role(undefined, null, function() {}, 1.5, {k: [true]});
              console.log("hello", 3);
              expiry();
            }
            """,
            globals: [
                "channel": recorder.host("channel"),
                "access": recorder.host("access"),
                "role": recorder.host("role"),
                "console.log": recorder.host("console.log"),
                "expiry": recorder.host("expiry"),
            ]
        )
        XCTAssertEqual(try f.call([["channels": ["x", "y"], "owner": "ann"]]), .null)
        let calls = recorder.all
        XCTAssertEqual(calls.map(\.0), ["channel", "channel", "access", "role", "console.log", "expiry"])
        XCTAssertEqual(calls[0].1, ["a", "b"])
        XCTAssertEqual(calls[1].1, [["x", "y"]])
        XCTAssertEqual(calls[2].1, ["ann", ["c1", "c2"]])
        XCTAssertEqual(calls[3].1, [nil, nil, nil, .double(1.5), ["k": [true]]])
        XCTAssertEqual(calls[4].1, ["hello", 3])
        XCTAssertEqual(calls[5].1, [])
    }

    func testHostReturnValuesReachTheScript() throws {
        let f = try JSFunction(
            source: "function() { return [lookup('x'), typeof nothing(), nothing() === undefined, nul() === null]; }",
            globals: [
                "lookup": { args, _ in ["key": args[0], "list": [1, "\u{1F600}"]] },
                "nothing": { _, _ in nil },
                "nul": { _, _ in .null },
            ]
        )
        XCTAssertEqual(try f.call([]), [["key": "x", "list": [1, "\u{1F600}"]], "undefined", true, true])
    }

    func testHostThrownValueCanBeCaughtByTheScript() throws {
        let f = try JSFunction(
            source: """
            function(user) {
              try { requireUser(user); return 'allowed'; }
              catch (e) { return {caught: e.forbidden, isError: e instanceof Error}; }
            }
            """,
            globals: ["requireUser": { args, _ in
                if args.first != "ann" { throw JSError.thrown(["forbidden": "sg wrong user"]) }
                return nil
            }]
        )
        XCTAssertEqual(try f.call(["ann"]), "allowed")
        XCTAssertEqual(try f.call(["bob"]), ["caught": "sg wrong user", "isError": false])
    }

    func testHostThrownValuePropagatesAsJSError() throws {
        let f = try JSFunction(
            source: "function(doc) {\n  requireRole('admin');\n  return 'unreachable';\n}",
            globals: ["requireRole": { _, _ in throw JSError.thrown(["forbidden": "missing role"]) }]
        )
        XCTAssertThrowsError(try f.call([[:]])) { error in
            XCTAssertEqual(error as? JSError, .thrown(["forbidden": "missing role"]))
        }
    }

    func testOtherSwiftErrorsBecomeJSErrors() throws {
        struct Broken: Error, CustomStringConvertible { var description: String { "broken host" } }
        let f = try JSFunction(
            source: "function() {\n  try { fail(); } catch (e) { return [e instanceof Error, e.message]; }\n}",
            globals: ["fail": { _, _ in throw Broken() }]
        )
        XCTAssertEqual(try f.call([]), [true, "broken host"])
        let g = try JSFunction(source: "function() {\n\n  fail();\n}", globals: ["fail": { _, _ in throw Broken() }])
        XCTAssertThrowsError(try g.call([])) { error in
            let value = (error as? JSError)?.thrownValue
            XCTAssertEqual(value?["name"], "Error")
            XCTAssertEqual(value?["message"], "broken host")
        }
    }

    func testContextIsPerCall() throws {
        final class Outputs: @unchecked Sendable {
            var channels: [String] = []
        }
        let f = try JSFunction(
            source: "function(doc) { channel(doc.c); return whoami(); }",
            globals: [
                "channel": { args, context in
                    if case .string(let c) = args[0] { (context as? Outputs)?.channels.append(c) }
                    return nil
                },
                "whoami": { _, context in (context as? Outputs).map { .int(Int64($0.channels.count)) } ?? "none" },
            ]
        )
        let first = Outputs(), second = Outputs()
        XCTAssertEqual(try f.call([["c": "one"]], context: first), 1)
        XCTAssertEqual(try f.call([["c": "two"]], context: second), 1)
        XCTAssertEqual(try f.call([["c": "three"]]), "none")
        XCTAssertEqual(first.channels, ["one"])
        XCTAssertEqual(second.channels, ["two"])
    }

    func testReentrantCallIsRefused() throws {
        let holder = Locked<JSFunction?>(nil)
        let f = try JSFunction(
            source: "function() { try { again(); } catch (e) { return e.message; } }",
            globals: ["again": { _, _ in
                let target = holder.withLock { $0 }
                return try target?.call([])
            }]
        )
        holder.withLock { $0 = f }
        defer { holder.withLock { $0 = nil } }
        let message = try f.call([])
        XCTAssertEqual(message, .string(JSError.reentrantCall.message))
    }

    func testManyHostCallsInOneCall() throws {
        let count = Locked(0)
        let f = try JSFunction(
            source: "function(n) { var s = 0; for (var i = 0; i < n; i++) s += add(i); return s; }",
            globals: ["add": { args, _ in
                count.withLock { $0 += 1 }
                return args[0]
            }]
        )
        XCTAssertEqual(try f.call([10_000]), 49_995_000)
        XCTAssertEqual(count.withLock { $0 }, 10_000)
    }
}

/// A value behind a lock, shareable with host functions.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R {
        mutex.withLock { body(&$0) }
    }
}
