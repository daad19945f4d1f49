import Testing

@testable import Discovery

/// Failed resolvers and address queries back off (a loaded daemon refusing new clients
/// must not be retried every `retryInterval` by every lookup of every node).
@Suite("Discovery engine: lookup retry backoff")
struct DiscoveryEngineRetryTests {
    @Test func doublesPerFailureUpTo32Times() {
        let base = Duration.seconds(2)
        let delays = (1...8).map { DiscoveryEngine.retryDelay(failures: $0, base: base, jitter: 1) }
        #expect(delays == [2, 4, 8, 16, 32, 64, 64, 64].map { Duration.seconds($0) })
    }

    @Test func jitterScalesTheDelay() {
        let base = Duration.seconds(2)
        #expect(DiscoveryEngine.retryDelay(failures: 3, base: base, jitter: 0.75) == .seconds(6))
        #expect(DiscoveryEngine.retryDelay(failures: 3, base: base, jitter: 1.25) == .seconds(10))
        // A first failure (or a nonsense count) waits the base interval.
        #expect(DiscoveryEngine.retryDelay(failures: 0, base: base, jitter: 1) == .seconds(2))
    }
}
