import Dispatch
import Testing

/// A test trait that runs each test it is given to on dispatch threads outside Swift's
/// cooperative pool (`@Suite(.ownThread)`, `@Test(.ownThread)`).
///
/// That pool has one thread per core (two here) and the suite's hundreds of tests run
/// on it side by side. A test that computes for seconds (a fuzz loop, a property test
/// over thousands of random trees: slow in a debug build) holds one of those threads
/// the whole time, and the in-process nodes of the tests beside it stall: a node's
/// graceful stop was seen to take 5–6 s instead of milliseconds. Off the pool the test
/// is time-sliced by the kernel with everything else. Only for tests that
/// compute; a test's `async` calls still run where they would.
public struct OwnThreadTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A suite's scope is entered once for the suite and again for each of its tests
        // (recursive): only a test case's body needs moving.
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(QueueExecutor.shared) { try await function() }
    }
}

extension OwnThreadTrait {
    /// Whether the caller runs on the trait's queue (a thread outside the cooperative pool).
    public static var isCurrent: Bool { DispatchQueue.getSpecific(key: QueueExecutor.key) != nil }
}

extension Trait where Self == OwnThreadTrait {
    /// Runs the test (each test of the suite) off the cooperative pool; see `OwnThreadTrait`.
    public static var ownThread: OwnThreadTrait { OwnThreadTrait() }
}

/// A task executor over a concurrent dispatch queue of its own: its jobs run on
/// dispatch's threads outside the cooperative pool. There is one, and it lives as long
/// as the process: a task started inside a test's scope (a connection's reader, say)
/// inherits the preference as an unowned reference and may run after the test ended,
/// so an executor made per test would be freed under it.
final class QueueExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = QueueExecutor()
    static let key = DispatchSpecificKey<Bool>()
    private let queue: DispatchQueue

    private init() {
        queue = DispatchQueue(label: "test.own-thread", attributes: .concurrent)
        queue.setSpecific(key: Self.key, value: true)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
