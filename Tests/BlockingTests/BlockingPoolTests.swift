import Blocking
import Foundation
import Synchronization
import Testing

/// `BlockingPool`: jobs run on its own threads, in order, at most `threadCount` at once;
/// `map` keeps the order of its elements; a job not yet started is dropped when its task
/// is cancelled.
@Suite struct BlockingPoolTests {
    @Test func jobsRunOnThePoolsThreads() async throws {
        let pool = BlockingPool(threadCount: 2, name: "test-pool")
        #expect(!pool.isCurrent)
        let onPool = await pool.perform { pool.isCurrent }
        #expect(onPool)
        let value = try await pool.run { 6 * 7 }
        #expect(value == 42)
    }

    @Test func errorsReachTheCaller() async {
        struct Failure: Error, Equatable {}
        let pool = BlockingPool(threadCount: 1, name: "test-pool")
        await #expect(throws: Failure.self) {
            try await pool.perform { () throws(Failure) in throw Failure() }
        }
    }

    @Test func oneThreadRunsJobsFirstInFirstOut() async {
        let pool = BlockingPool(threadCount: 1, name: "test-pool")
        let order = Mutex<[Int]>([])
        let gate = DispatchSemaphore(value: 0)
        pool.execute { gate.wait() }
        for index in 0..<20 { pool.execute { order.withLock { $0.append(index) } } }
        gate.signal()
        await pool.perform {}
        #expect(order.withLock { $0 } == Array(0..<20))
    }

    @Test func mapKeepsTheOrderAcrossPieces() async {
        let pool = BlockingPool(threadCount: 3, name: "test-pool")
        let squares = await pool.map(Array(0..<1000), piece: 37) { $0 * $0 }
        #expect(squares == (0..<1000).map { $0 * $0 })
        #expect(await pool.map([Int](), piece: 8) { $0 }.isEmpty)
    }

    @Test func noMoreThanThreadCountJobsRunAtOnce() async {
        let pool = BlockingPool(threadCount: 3, name: "test-pool")
        let running = Mutex((now: 0, most: 0))
        _ = await pool.map(Array(0..<24), piece: 1) { _ in
            running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            usleep(2000)
            running.withLock { $0.now -= 1 }
            return 0
        }
        #expect(running.withLock { $0.most } <= 3)
    }

    @Test func aCancelledTaskDropsItsJobBeforeItRuns() async {
        let pool = BlockingPool(threadCount: 1, name: "test-pool")
        let gate = DispatchSemaphore(value: 0)
        pool.execute { gate.wait() }
        let ran = Mutex(false)
        let task = Task { try await pool.run { ran.withLock { $0 = true } } }
        // The job waits behind the blocked one until the task is cancelled.
        try? await Task.sleep(for: .milliseconds(50))
        task.cancel()
        let result = await task.result
        gate.signal()
        await pool.perform {}
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(!ran.withLock { $0 })
    }
}
