import DocumentModel
import Foundation
import JSEngine
import XCTest

/// Runaway scripts: the time budget, the wedged state, and that everything else keeps working.
///
/// Every `while(true){}` test leaves one abandoned thread spinning (at idle priority) until
/// the test process exits, so these tests use as few endless loops as possible.
final class JSFunctionTimeoutTests: XCTestCase {
    private let shortBudget = JSFunction.Options(timeout: .milliseconds(300))

    private func elapsed(_ body: () throws -> Void) rethrows -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        return clock.now - start
    }

    func testEndlessLoopTimesOutThenFailsFast() throws {
        let f = try JSFunction(source: "function(doc) { if (doc.spin) { while (true) {} } return 'ok'; }", options: shortBudget)
        XCTAssertEqual(try f.call([["spin": false]]), "ok")

        let first = try elapsed {
            XCTAssertThrowsError(try f.call([["spin": true]])) { XCTAssertEqual($0 as? JSError, .timeout) }
        }
        XCTAssertGreaterThanOrEqual(first, Duration.milliseconds(300))
        XCTAssertLessThan(first, Duration.milliseconds(1500), "the caller gets the timeout about when the budget ends")
        XCTAssertTrue(f.isWedged)

        let later = try elapsed {
            for _ in 0..<100 {
                XCTAssertThrowsError(try f.call([["spin": false]])) { XCTAssertEqual($0 as? JSError, .wedged) }
            }
        }
        XCTAssertLessThan(later, Duration.milliseconds(100), "calls to a wedged function fail at once")

        // The process keeps working: other functions run normally, at normal speed.
        let other = try JSFunction(source: "function(n) { var s = 0; for (var i = 0; i < n; i++) s += i; return s; }")
        XCTAssertEqual(try other.call([100_000]), 4_999_950_000)
        XCTAssertFalse(other.isWedged)
    }

    func testCallersQueuedBehindARunawayCallGetWedged() throws {
        let f = try JSFunction(
            source: "function(ms) { var end = Date.now() + ms; while (Date.now() < end) {} return ms; }",
            options: shortBudget
        )
        let results = Locked<[JSError]>([])
        let group = DispatchGroup()
        for delay in [0, 50, 100] {
            DispatchQueue.global().async(group: group) {
                usleep(UInt32(delay) * 1000)
                do {
                    _ = try f.call([1_000])
                } catch let error as JSError {
                    results.withLock { $0.append(error) }
                } catch {
                    XCTFail("unexpected \(error)")
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 5), .success)
        let errors = results.withLock { $0 }
        XCTAssertEqual(errors.count, 3)
        XCTAssertEqual(errors.filter { $0 == .timeout }.count, 1)
        XCTAssertEqual(errors.filter { $0 == .wedged }.count, 2)
    }

    func testSlowFiniteCallWedgesAndItsHeapIsFreedWhenItEnds() throws {
        let before = JSFunction.liveHeapCount
        do {
            let f = try JSFunction(
                source: "function(ms) { var end = Date.now() + ms; while (Date.now() < end) {} return ms; }",
                options: shortBudget
            )
            XCTAssertEqual(try f.call([10]), 10)
            XCTAssertThrowsError(try f.call([800])) { XCTAssertEqual($0 as? JSError, .timeout) }
            XCTAssertThrowsError(try f.call([1])) { XCTAssertEqual($0 as? JSError, .wedged) }
        }
        // The abandoned thread finishes its loop about 0.5 s later, then destroys the heap.
        let deadline = ContinuousClock.now + .seconds(5)
        while JSFunction.liveHeapCount > before, ContinuousClock.now < deadline {
            usleep(20_000)
        }
        XCTAssertLessThanOrEqual(JSFunction.liveHeapCount, before)
    }

    func testAllocatingRunawayLoopDiesAfterTheTimeout() throws {
        let before = JSFunction.liveHeapCount
        do {
            let f = try JSFunction(
                source: "function() { var a = []; while (true) { a.push({n: a.length}); if (a.length > 1000) a = []; } }",
                options: JSFunction.Options(timeout: .milliseconds(200), memoryLimit: 0)
            )
            XCTAssertThrowsError(try f.call([])) { XCTAssertEqual($0 as? JSError, .timeout) }
            XCTAssertTrue(f.isWedged)
        }
        // Once abandoned, the heap refuses allocations: the loop ends with an error.
        let deadline = ContinuousClock.now + .seconds(5)
        while JSFunction.liveHeapCount > before, ContinuousClock.now < deadline {
            usleep(20_000)
        }
        XCTAssertLessThanOrEqual(JSFunction.liveHeapCount, before)
    }

    func testRunawayEvaluationOfTheSourceTimesOut() {
        let source = "(function() { var end = Date.now() + 1000; while (Date.now() < end) {} return function() {}; })()"
        XCTAssertThrowsError(try JSFunction(source: source, options: shortBudget)) {
            XCTAssertEqual($0 as? JSError, .timeout)
        }
    }

    func testAsyncCallTimesOutToo() async throws {
        let f = try JSFunction(
            source: "function(ms) { var end = Date.now() + ms; while (Date.now() < end) {} return ms; }",
            options: shortBudget
        )
        let ok = try await f.call([5])
        XCTAssertEqual(ok, 5)
        do {
            _ = try await f.call([700])
            XCTFail("expected a timeout")
        } catch {
            XCTAssertEqual(error, .timeout)
        }
        XCTAssertTrue(f.isWedged)
    }
}
