import Dispatch
import Testing

/// A test trait that runs each test it is given to on a thread of its own instead of
/// Swift's cooperative pool (`@Suite(.ownThread)`, `@Test(.ownThread)`).
///
/// That pool has one thread per core (two here) and the suite's hundreds of tests run
/// on it side by side. A test that computes for seconds (a fuzz loop, a property test
/// over thousands of random trees: slow in a debug build) holds one of those threads
/// the whole time, and the in-process nodes of the tests beside it stall: a node's
/// graceful stop was seen to take 5–6 s instead of milliseconds. On a thread of its
/// own the test is time-sliced by the kernel with everything else. Only for tests that
/// compute; a test's `async` calls still run where they would.
public struct OwnThreadTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A suite's scope is entered once for the suite and again for each of its tests
        // (recursive): only a test case's body needs the thread.
        guard testCase != nil else { return try await function() }
        let executor = SerialQueueExecutor(label: "test.\(test.name)")
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension OwnThreadTrait {
    /// Whether the caller runs on a test's own thread (one of this trait's queues).
    public static var isCurrent: Bool { DispatchQueue.getSpecific(key: SerialQueueExecutor.key) != nil }
}

extension Trait where Self == OwnThreadTrait {
    /// Runs the test (each test of the suite) on a thread of its own; see `OwnThreadTrait`.
    public static var ownThread: OwnThreadTrait { OwnThreadTrait() }
}

/// A task executor over a serial dispatch queue: its jobs run on one of dispatch's
/// threads outside the cooperative pool, one at a time.
final class SerialQueueExecutor: TaskExecutor, @unchecked Sendable {
    static let key = DispatchSpecificKey<Bool>()
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.key, value: true)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
