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

/// Queued commands: only the last set of peers to resolve counts.
@Suite("Discovery engine: coalesced commands")
struct DiscoveryEngineCommandTests {
    @Test func onlyTheLastResolveSetIsKeptAndTheRestStayInOrder() {
        let queued: [DiscoveryEngine.Command] = [
            .resolveOnly(["a"]), .refresh, .resolveOnly(["a", "b"]), .updateDatabases(["db"]), .resolveOnly(["b", "c"]),
        ]
        let kept = DiscoveryEngine.coalesced(queued)
        #expect(kept.count == 3)
        guard kept.count == 3 else { return }
        if case .refresh = kept[0] {} else { Issue.record("refresh first, got \(kept[0])") }
        if case .updateDatabases(let dbs) = kept[1] { #expect(dbs == ["db"]) } else { Issue.record("update second") }
        if case .resolveOnly(let names) = kept[2] { #expect(names == ["b", "c"]) } else { Issue.record("last set third") }
    }

    @Test func withoutResolveSetsNothingChanges() {
        let kept = DiscoveryEngine.coalesced([.refresh, .stop])
        #expect(kept.count == 2)
        if case .stop = kept.last {} else { Issue.record("stop kept last") }
    }
}
