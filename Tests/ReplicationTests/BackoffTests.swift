@testable import Replication
import Testing

@Suite struct BackoffTests {
    @Test func backoffGrowsIsCappedAndJittered() {
        let cap = Duration.seconds(3)
        var previousMaximum = Duration.zero
        for attempt in 1...12 {
            let samples = (0..<200).map { _ in Replicator.backoff(attempt: attempt, cap: cap) }
            let maximum = samples.max()!
            // Never above the cap, never below half of the (capped) base: ±50% jitter.
            let base = min(Duration.milliseconds(250) * (1 << min(attempt - 1, 10)), cap)
            #expect(samples.allSatisfy { $0 <= base && $0 >= base / 2 })
            #expect(maximum >= previousMaximum / 2)
            previousMaximum = maximum
            // Jitter: not every sample is the same.
            #expect(Set(samples).count > 1)
        }
        #expect(Replicator.backoff(attempt: 30, cap: cap) <= cap)
    }

    @Test func permanentFailuresStopRetrying() {
        #expect(Replicator.isPermanent(DialError("HTTP 401", permanent: true)))
        #expect(!Replicator.isPermanent(DialError("timeout", permanent: false)))
    }
}
