import Foundation
import Synchronization

/// A few threads of its own for blocking work, apart from Swift's cooperative pool (as
/// SwiftNIO keeps `NIOThreadPool` apart from its event loops).
///
/// The cooperative pool has one thread per core (two on a small machine). Whatever
/// blocks one of them (an fsync, a file read, a JavaScript compile, a password hash, a
/// `concurrentPerform`) stalls every task of the process for as long: replication links
/// stop reading, requests wait. Such work goes through here instead: `perform`/`run`
/// suspend the caller's task, one of these threads runs the body, the task resumes with
/// its result. Jobs run in the order they were queued (FIFO), at most `threadCount` at a
/// time. CPU-heavy batches go through `map`, in pieces of a few milliseconds, so that a
/// short job never waits behind a long one for long.
///
/// `BlockingPool` owns its threads and its queue of jobs. `shared` serves the whole
/// process; its threads start with the first job and live as long as the process.
public final class BlockingPool: Sendable {
    /// The process's pool: a few threads (twice the cores, at least 4, at most 16).
    public static let shared = BlockingPool(
        threadCount: min(max(ProcessInfo.processInfo.activeProcessorCount * 2, 4), 16), name: "shoal-blocking")

    /// The most jobs that run at once.
    public let threadCount: Int
    private let name: String
    private let queue: JobQueue

    /// A pool of `threadCount` threads named `name-<n>`, started as jobs arrive.
    public init(threadCount: Int, name: String) {
        precondition(threadCount > 0, "a pool needs a thread")
        self.threadCount = threadCount
        self.name = name
        queue = JobQueue()
    }

    /// Whether the calling thread is one of this pool's.
    public var isCurrent: Bool { Thread.current.threadDictionary[JobQueue.threadKey] as? ObjectIdentifier == ObjectIdentifier(queue) }

    /// Runs `body` on one of the pool's threads and returns what it returns. The body
    /// always runs, even when the calling task is cancelled meanwhile: for work that
    /// must happen once it was asked for (a blob write, closing a file, a join).
    public func perform<T, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            _ = submit {
                let result = Result { () throws(E) in try body() }
                continuation.resume(returning: UnsafeTransfer(result).value)
            }
        }
        return try result.get()
    }

    /// Runs `body` on one of the pool's threads, unless the calling task is cancelled
    /// before a thread takes it (then throws `CancellationError` and `body` never runs).
    public func run<T>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try Task.checkCancellation()
        let ticket = Ticket()
        let result: Result<T, any Error> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resume: @Sendable (Result<T, any Error>) -> Void = { continuation.resume(returning: UnsafeTransfer($0).value) }
                let id = submit {
                    resume(Result { try body() })
                } dropped: {
                    resume(.failure(CancellationError()))
                }
                ticket.set(id)
            }
        } onCancel: {
            if let id = ticket.id { queue.cancel(id) }
        }
        return try result.get()
    }

    /// Queues `body` and returns at once (fire and forget: a thread join, a cleanup).
    public func execute(_ body: @escaping @Sendable () -> Void) {
        _ = submit(body)
    }

    /// `transform` of every element, in order, computed on the pool in pieces of
    /// `piece` elements (choose it so a piece takes a few milliseconds). The pieces run
    /// side by side on the pool's threads; the caller's task waits, holding no thread.
    /// Inlinable, so that it is specialized where it is called: unspecialized across
    /// modules, every element paid generic metadata lookups (about 2,300 instructions a
    /// revision on a pull's receiving side, counted with callgrind).
    @inlinable
    public func map<Element: Sendable, Output: Sendable>(
        _ elements: [Element], piece: Int, _ transform: @escaping @Sendable (Element) -> Output
    ) async -> [Output] {
        guard !elements.isEmpty else { return [] }
        let size = max(piece, 1)
        let pieces = (elements.count + size - 1) / size
        let results = PieceResults<Output>(count: elements.count, pieces: pieces)
        return await withCheckedContinuation { continuation in
            for index in 0..<pieces {
                let range = (index * size)..<min((index + 1) * size, elements.count)
                _ = submit {
                    let outputs = range.map { transform(elements[$0]) }
                    if results.store(outputs, at: range.lowerBound) {
                        continuation.resume(returning: results.values)
                    }
                }
            }
        }
    }

    /// Queues a job; starts a thread when none is idle and fewer than `threadCount` run.
    @usableFromInline
    func submit(_ body: @escaping @Sendable () -> Void, dropped: (@Sendable () -> Void)? = nil) -> Int {
        let (id, newThread) = queue.push(Job(run: body, dropped: dropped), threadLimit: threadCount)
        if let newThread {
            let thread = Thread { [queue] in queue.work() }
            thread.name = "\(name)-\(newThread)"
            thread.start()
        }
        return id
    }
}

/// One queued job: its body, and what to do instead if it is cancelled before it runs.
struct Job {
    let run: @Sendable () -> Void
    let dropped: (@Sendable () -> Void)?
}

/// The id of a job queued by `run`, set once it is queued (read by the cancellation handler).
private final class Ticket: Sendable {
    private let box = Mutex<Int?>(nil)
    func set(_ id: Int) { box.withLock { $0 = id } }
    var id: Int? { box.withLock { $0 } }
}

/// A value handed from a pool thread to the waiting task: the continuation orders the
/// accesses, the value is never touched on both sides.
struct UnsafeTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
