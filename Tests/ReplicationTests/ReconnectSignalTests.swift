import BLIP
import DocumentModel
import DocumentStore
import Foundation
@testable import Replication
import Synchronization
import Testing
import TestSupport

/// `ReconnectSignal`: a link of a mesh coming up wakes the links waiting to reconnect —
/// a dial in its backoff dials at once, a hung dial gets its next hedged attempt at once.
/// The waits here are a minute long: a wake that did not happen fails the test (the
/// awaited value is false, or the dial count stays put) instead of passing slowly.
@Suite struct ReconnectSignalTests {
    @Test func firingEndsASleepAndTimeEndsItOtherwise() async {
        let signal = ReconnectSignal()
        let woke = Mutex<Bool?>(nil)
        let sleeper = Task { woke.withLock { $0 = nil }; let fired = await signal.sleep(for: .seconds(60)); woke.withLock { $0 = fired } }
        // The sleeper may not be waiting yet when the first fire comes: fire until it returns.
        let returned = await eventually(timeout: .seconds(30)) {
            signal.fire()
            return woke.withLock { $0 } != nil
        }
        #expect(returned)
        #expect(woke.withLock { $0 } == true)
        await sleeper.value
        #expect(await signal.sleep(for: .milliseconds(10)) == false)
    }

    @Test func aCancelledSleepReturnsAtOnce() async {
        let signal = ReconnectSignal()
        let sleeper = Task { await signal.sleep(for: .seconds(60)) }
        sleeper.cancel()
        #expect(await sleeper.value == false)
    }

    @Test func aHungDialIsHedgedWhenTheSignalFires() async throws {
        struct Timeout: Error {}
        let signal = ReconnectSignal()
        let attempt = DialAttempt()
        let started = Mutex<[Int]>([])
        let dial = Task {
            try await ReconnectSignal.$current.withValue(signal) {
                // Hedges would come only after a minute without the signal.
                try await attempt.run(deadline: .seconds(120), hedgeAfter: .seconds(60), timeoutError: Timeout()) { index in
                    started.withLock { $0.append(index) }
                    if index == 0 {
                        while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
                        return
                    }
                    guard attempt.start(index) else { return }
                }
            }
        }
        let hedged = await eventually(timeout: .seconds(30)) {
            signal.fire()
            return started.withLock { $0.contains(1) }
        }
        #expect(hedged, "the signal started the second attempt before the hedge delay")
        try await dial.value
    }

    /// Fails every dial, counting them.
    final class FailingDialer: BLIPDialer {
        let count = Mutex(0)
        func dial(
            url: String, username: String?, password: String?, heartbeat: Duration, pinnedCertificate: String?,
            session: @escaping @Sendable (BLIPConnection) async throws -> Void
        ) async throws {
            count.withLock { $0 += 1 }
            throw DialError("no answer from \(url)", permanent: false)
        }
    }

    @Test func aReplicatorInItsBackoffDialsWhenTheSignalFires() async throws {
        let local = try await TestStore.make()
        defer { local.destroy() }
        let signal = ReconnectSignal()
        let dialer = FailingDialer()
        var configuration = ReplicationConfiguration(
            id: "link", remote: "ws://peer/db", direction: .pushAndPull, continuous: true, maxBackoff: .seconds(60))
        configuration.retryRefusals = true
        let replicator = Replicator(store: local.store, configuration: configuration, dialer: dialer, reconnectSignal: signal)
        replicator.start()
        defer { Task { await replicator.stop() } }
        // Backoff alone spaces 12 dials by at least 0.125 + 0.25 + … + 30 + 30 + 30 s
        // (122 s); woken, the replicator redials at once each time. (The wait allows for a
        // loaded full test run: once, 30 s were not enough there.)
        let redialed = await eventually(timeout: .seconds(90)) {
            signal.fire()
            return dialer.count.withLock { $0 } >= 12
        }
        #expect(redialed, "\(dialer.count.withLock { $0 }) dials")
    }
}
