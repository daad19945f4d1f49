import DocumentModel
import Foundation
import JSEngine
import XCTest

/// Many calls, concurrent callers, batches, heap lifetime, and a rough per-call timing.
final class JSFunctionStressTests: XCTestCase {
    private let validation = "function(doc){ if(!doc.type) throw({forbidden:\"no type\"}); return doc.type; }"

    func testTenThousandCallsStayCorrect() throws {
        let f = try JSFunction(source: "function(doc, i) { var o = {i: i, tags: []}; for (var k in doc) o.tags.push(k); o.text = doc.text + i; return o; }")
        for i in 0..<10_000 {
            let result = try f.call([["text": "n\u{E9}", "a": .int(Int64(i))], .int(Int64(i))])
            guard result == ["i": .int(Int64(i)), "tags": ["a", "text"], "text": .string("n\u{E9}\(i)")] else {
                return XCTFail("call \(i) returned \(result)")
            }
        }
        let thrower = try JSFunction(source: validation)
        for i in 0..<10_000 {
            XCTAssertThrowsError(try thrower.call([["n": .int(Int64(i))]]))
        }
        XCTAssertFalse(f.isWedged)
        XCTAssertFalse(thrower.isWedged)
    }

    func testConcurrentCallersAreSerializedSafely() throws {
        let f = try JSFunction(source: "function(caller, i) { if (typeof calls === 'undefined') calls = 0; calls++; return [caller, i, calls]; }")
        let threads = 8, perThread = 500
        let failures = Locked(0)
        let maxCount = Locked(0)
        DispatchQueue.concurrentPerform(iterations: threads) { caller in
            for i in 0..<perThread {
                do {
                    let result = try f.call([.int(Int64(caller)), .int(Int64(i))])
                    guard case .array(let parts) = result, parts.count == 3,
                          parts[0] == .int(Int64(caller)), parts[1] == .int(Int64(i)),
                          case .int(let n) = parts[2] else {
                        failures.withLock { $0 += 1 }
                        continue
                    }
                    maxCount.withLock { $0 = max($0, Int(n)) }
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, 0)
        XCTAssertEqual(maxCount.withLock { $0 }, threads * perThread, "every call ran exactly once, on one heap")
    }

    func testConcurrentAsyncCallers() async throws {
        let f = try JSFunction(source: "function(i) { return i * 2; }")
        let sum = try await withThrowingTaskGroup(of: Int64.self) { group in
            for i in 0..<200 {
                group.addTask {
                    guard case .int(let n) = try await f.call([.int(Int64(i))]) else { return -1 }
                    return n
                }
            }
            return try await group.reduce(0, +)
        }
        XCTAssertEqual(sum, 2 * (0..<200).reduce(0, +))
    }

    func testBatchCallsKeepPerItemErrorsAndContexts() throws {
        let seen = Locked<[String]>([])
        let f = try JSFunction(
            source: "function(doc) { tag(doc.type); if (!doc.type) throw({forbidden: 'no type'}); return doc.type; }",
            globals: ["tag": { _, context in
                if let name = context as? String { seen.withLock { $0.append(name) } }
                return nil
            }]
        )
        let results = try f.call(batch: [
            (arguments: [["type": "a"]], context: "first"),
            (arguments: [[:]], context: "second"),
            (arguments: [["type": "c"]], context: nil),
        ])
        XCTAssertEqual(results.count, 3)
        XCTAssertEqual(try results[0].get(), "a")
        XCTAssertThrowsError(try results[1].get()) { XCTAssertEqual($0 as? JSError, .thrown(["forbidden": "no type"])) }
        XCTAssertEqual(try results[2].get(), "c")
        XCTAssertEqual(seen.withLock { $0 }, ["first", "second"])
        XCTAssertEqual(try f.call(batch: []).count, 0)
    }

    func testAsyncBatch() async throws {
        let f = try JSFunction(source: "function(i) { return i + 1; }")
        let results = try await f.call(batch: (0..<100).map { (arguments: [.int(Int64($0))], context: nil) })
        XCTAssertEqual(try results.map { try $0.get() }, (1...100).map { .int(Int64($0)) })
    }

    func testHeapsAreFreedWhenFunctionsGoAway() throws {
        let before = JSFunction.liveHeapCount
        for i in 0..<200 {
            let f = try JSFunction(source: "function(x) { return x + \(i); }", globals: ["noop": { _, _ in nil }])
            XCTAssertEqual(try f.call([1]), .int(Int64(1 + i)))
            XCTAssertGreaterThan(JSFunction.liveHeapCount, before - 1)
        }
        // The worker threads end, and their heaps go, on the blocking pool after deinit.
        XCTAssertTrue(Self.heapsDrop(to: before), "deinit lets the heap be destroyed")
        for _ in 0..<50 {
            _ = try? JSFunction(source: "function( {")
        }
        XCTAssertTrue(Self.heapsDrop(to: before), "a failed compile frees its heap too")
    }

    /// Waits (up to a minute, for a loaded machine) until at most `count` heaps live.
    static func heapsDrop(to count: Int) -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while JSFunction.liveHeapCount > count {
            if ContinuousClock.now > deadline { return false }
            usleep(1000)
        }
        return true
    }

    func testPerCallTiming() throws {
        let f = try JSFunction(source: validation)
        let doc: JSON = ["_id": "doc-1", "type": "order", "qty": 3, "owner": "ann", "tags": ["a", "b"]]
        let bad: JSON = ["_id": "doc-2", "qty": 3]
        let n = 20_000
        for _ in 0..<1_000 { _ = try f.call([doc]) }
        let clock = ContinuousClock()

        var start = clock.now
        for _ in 0..<n { _ = try f.call([doc]) }
        let accepted = (clock.now - start) / n

        start = clock.now
        for _ in 0..<n { _ = try? f.call([bad]) }
        let rejected = (clock.now - start) / n

        let batch = Array(repeating: (arguments: [doc], context: (any Sendable)?.none), count: 1_000)
        start = clock.now
        for _ in 0..<(n / 1_000) { _ = try f.call(batch: batch) }
        let batched = (clock.now - start) / n

        start = clock.now
        for _ in 0..<n { _ = JSON.array([doc]).canonicalBytes() }
        let encoding = (clock.now - start) / n

        func micros(_ d: Duration) -> String {
            let value = Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12
            return String(Double((value * 10).rounded()) / 10) + " µs"
        }
        print("""
        JSEngine timing (\(n) calls of a small validation function; rough, build-dependent):
          one call, accepted:   \(micros(accepted))
          one call, forbidden:  \(micros(rejected))
          batched by 1000:      \(micros(batched)) per call
          Swift canonical encoding of the arguments alone: \(micros(encoding))
        """)
    }
}
