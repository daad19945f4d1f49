@testable import Replication
import Synchronization
import Testing
import TestSupport

/// Hedged dials (`DialAttempt`): an attempt that hangs gets company instead of holding
/// the link down until the deadline; one that fails is not hedged; the first session
/// wins and a late one is refused. Deadlines here are long (a minute): a dial that
/// waited on them would fail the test with the timeout error, not pass slowly.
@Suite struct DialAttemptTests {
    struct Timeout: Error {}

    /// Lets a hanging attempt wait until it is cancelled or released.
    final class Gate: Sendable {
        private let open = Mutex(false)
        func release() { open.withLock { $0 = true } }
        func wait() async {
            while !open.withLock({ $0 }) && !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    @Test func aHangingAttemptIsHedgedAndTheHedgeRunsTheSession() async throws {
        let attempt = DialAttempt()
        let ran = Mutex<[Int]>([])
        let firstCancelled = Mutex(false)
        try await attempt.run(deadline: .seconds(60), hedgeAfter: .milliseconds(50), timeoutError: Timeout()) { index in
            if index == 0 {
                // Sent into a fault: never answers until given up on.
                await Gate().wait()
                firstCancelled.withLock { $0 = Task.isCancelled }
                return
            }
            guard attempt.start(index) else { return }
            ran.withLock { $0.append(index) }
        }
        #expect(ran.withLock { $0 } == [1])
        #expect(attempt.attempts == 2)
        let cancelled = await eventually(timeout: .seconds(30)) { firstCancelled.withLock { $0 } }
        #expect(cancelled)
    }

    @Test func aFailedAttemptEndsTheDialWithoutWaitingForAHedge() async {
        let attempt = DialAttempt()
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await attempt.run(deadline: .seconds(60), hedgeAfter: .seconds(30), timeoutError: Timeout()) { _ in
                throw Refused()
            }
        }
        #expect(attempt.attempts == 1)
    }

    @Test func aLateSessionOfALosingAttemptIsRefused() async throws {
        let attempt = DialAttempt()
        let gate = Gate()
        let lateStart = Mutex<Bool?>(nil)
        try await attempt.run(deadline: .seconds(60), hedgeAfter: .milliseconds(20), timeoutError: Timeout()) { index in
            if index == 0 {
                // Connects, but only after the hedge won (cancellation does not stop it).
                await withTaskCancellationHandler { await gate.wait() } onCancel: { gate.release() }
                lateStart.withLock { $0 = attempt.start(0) }
                return
            }
            #expect(attempt.start(index))
        }
        let answered = await eventually(timeout: .seconds(30)) { lateStart.withLock { $0 } != nil }
        #expect(answered)
        #expect(lateStart.withLock { $0 } == false)
    }

    @Test func withoutAHedgeAHangingAttemptTimesOut() async {
        let attempt = DialAttempt()
        await #expect(throws: Timeout.self) {
            try await attempt.run(deadline: .milliseconds(50), timeoutError: Timeout()) { _ in
                await Gate().wait()
            }
        }
        #expect(attempt.attempts == 1)
    }
}
