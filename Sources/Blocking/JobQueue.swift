import Foundation

/// The jobs of one `BlockingPool`, first in first out, and the threads that take them:
/// a thread waits for a job while the queue is empty and runs one job at a time.
final class JobQueue: @unchecked Sendable {
    /// Marks the pool's threads (`BlockingPool.isCurrent`).
    static let threadKey = "shoal.blocking-pool"

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [(id: Int, job: Job)] = []
    private var head = 0
    private var nextID = 0
    private var threads = 0
    private var idle = 0

    /// Queues `job`; returns its id, and the number of a thread to start when no thread
    /// is idle and fewer than `threadLimit` exist.
    func push(_ job: Job, threadLimit: Int) -> (id: Int, newThread: Int?) {
        condition.lock()
        defer { condition.unlock() }
        nextID += 1
        jobs.append((nextID, job))
        var newThread: Int?
        // More jobs waiting than threads waiting for them: one more thread, if allowed.
        if jobs.count - head > idle && threads < threadLimit {
            threads += 1
            newThread = threads
        }
        condition.signal()
        return (nextID, newThread)
    }

    /// Takes the job `id` out of the queue if no thread took it yet, and tells its
    /// submitter (`Job.dropped`).
    func cancel(_ id: Int) {
        condition.lock()
        guard let index = jobs[head...].firstIndex(where: { $0.id == id }) else {
            condition.unlock()
            return
        }
        let job = jobs.remove(at: index).job
        condition.unlock()
        job.dropped?()
    }

    /// A pool thread's loop: forever, the oldest job.
    func work() {
        Thread.current.threadDictionary[Self.threadKey] = ObjectIdentifier(self)
        while true {
            condition.lock()
            while head == jobs.count {
                idle += 1
                condition.wait()
                idle -= 1
            }
            let job = jobs[head].job
            head += 1
            if head >= 64 && head * 2 >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.run()
        }
    }
}

/// The outputs of `BlockingPool.map`, filled piece by piece from several threads.
@usableFromInline
final class PieceResults<Output>: @unchecked Sendable {
    @usableFromInline let lock = NSLock()
    @usableFromInline var storage: [Output?]
    @usableFromInline var remaining: Int

    @inlinable
    init(count: Int, pieces: Int) {
        storage = Array(repeating: nil, count: count)
        remaining = pieces
    }

    /// Stores one piece's outputs from `start` on; true for the last piece.
    @inlinable
    func store(_ outputs: [Output], at start: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        for (offset, output) in outputs.enumerated() { storage[start + offset] = output }
        remaining -= 1
        return remaining == 0
    }

    /// Every output (once every piece is stored).
    @inlinable
    var values: [Output] {
        lock.lock()
        defer { lock.unlock() }
        return storage.map { $0! }
    }
}
