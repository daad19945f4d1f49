import Blocking
import Foundation
import Testing

/// The lag probe catches a blocking call on the cooperative pool: with every pool thread
/// blocked in `usleep` for 1.5 s, the probe's task runs at least a second late.
@Suite(.serialized) struct PoolLagProbeTests {
    @Test func theProbeCatchesABlockingCallOnThePool() async throws {
        let probe = PoolLagProbe(interval: .milliseconds(20))
        probe.start()
        defer { probe.stop() }
        // Wait until the probe runs (a first sample), so that it waits for the pool below.
        while probe.figures.samples == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(probe.figures.worst < .seconds(1), "the pool was already stalled: \(probe.figures.worst)")
        // The pool has one thread per core: block them all, as blocking work would.
        let width = ProcessInfo.processInfo.activeProcessorCount
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<width {
                group.addTask { usleep(1_500_000) }
            }
        }
        // The probe's task that was due meanwhile has run by now, or soon does.
        while probe.figures.samples < 3 { try await Task.sleep(for: .milliseconds(20)) }
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
