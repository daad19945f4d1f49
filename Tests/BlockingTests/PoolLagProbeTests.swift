import Blocking
import Dispatch
import Foundation
import Testing

/// The lag probe catches a blocking call on the executor it measures: with that executor's
/// only thread blocked in `usleep` for 1.5 s, the probe's task runs at least a second late.
/// The test measures an executor of its own (one serial queue), not the cooperative pool:
/// blocking every pool thread of a test process stalls all the tests running beside it.
@Suite struct PoolLagProbeTests {
    @Test func theProbeCatchesABlockingCallOnItsExecutor() async throws {
        let executor = SerialQueueExecutor()
        let probe = PoolLagProbe(interval: .milliseconds(20), executor: executor)
        probe.start()
        defer { probe.stop() }
        // Wait until the probe runs (a first sample), so that it waits for the block below.
        while probe.figures.samples == 0 { try await Task.sleep(for: .milliseconds(5)) }
        // (No expectation on the lag so far: in a loaded test process even a private
        // executor's wake-ups can come late, since the sleep's timer fires elsewhere. What
        // matters is that a block of its one thread shows.)
        await Task(executorPreference: executor) { _ = usleep(1_500_000) }.value
        // The probe's task that was due meanwhile has run by now, or soon does.
        let before = probe.figures.samples
        while probe.figures.samples < before + 2 { try await Task.sleep(for: .milliseconds(20)) }
        let worst = probe.figures.worst
        #expect(worst >= .seconds(1), "worst lag \(worst)")
        #expect(probe.figures.recentWorst >= .seconds(1))
    }

    @Test func anIdleProbeRecordsSamples() async throws {
        let probe = PoolLagProbe(interval: .milliseconds(10))
        probe.start()
        defer { probe.stop() }
        while probe.figures.samples < 5 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(probe.figures.last >= .zero)
    }
}

/// A task executor with one thread: a serial dispatch queue.
private final class SerialQueueExecutor: TaskExecutor, @unchecked Sendable {
    private let queue = DispatchQueue(label: "PoolLagProbeTests")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
