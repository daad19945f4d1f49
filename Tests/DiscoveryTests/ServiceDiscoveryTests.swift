import Foundation
import Logging
import Synchronization
import Testing

@testable import Discovery

/// Runs ServiceDiscovery in this process with no reachable daemon. The system bus address is
/// pointed at a path that does not exist, so these tests never reach a real avahi-daemon (and
/// never send mDNS from the machine's own network namespace), whatever runs on the machine.
@Suite("ServiceDiscovery without a daemon", .serialized)
struct ServiceDiscoveryTests {
    static let noBus: Void = {
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/shoal-discovery-tests/bus", 1)
    }()

    private func makeDiscovery() -> ServiceDiscovery {
        Self.noBus
        var configuration = DiscoveryConfiguration(nodeID: "test-node", group: "orders", port: 4984, databases: ["orders"])
        configuration.retryInterval = .milliseconds(50)
        return ServiceDiscovery(configuration: configuration, logger: Logger(label: "DiscoveryTests"))
    }

    /// Collects the events of `stream` until it ends.
    private func collect(_ stream: AsyncStream<DiscoveryEvent>) -> Task<[DiscoveryEvent], Never> {
        Task {
            var events: [DiscoveryEvent] = []
            for await event in stream { events.append(event) }
            return events
        }
    }

    @Test func reportsUnavailableOnceAndKeepsRetryingQuietly() async throws {
        let discovery = makeDiscovery()
        let collector = collect(discovery.events())
        discovery.start()
        try await Task.sleep(for: .milliseconds(400))  // several retry intervals
        #expect(!discovery.isDaemonAvailable)
        discovery.refresh()  // retries at once; must not crash
        discovery.update(databases: ["orders", "more"])
        try await Task.sleep(for: .milliseconds(100))
        await discovery.stop()
        let events = await collector.value
        #expect(events.count == 1)
        guard case .daemonUnavailable(let reason)? = events.first else {
            Issue.record("expected daemonUnavailable, got \(events)")
            return
        }
        #expect(reason.contains("no avahi-daemon reachable"))
        #expect(reason.contains("avahi_client_new"))
    }

    @Test func stopWithoutStartEndsTheStream() async {
        let discovery = makeDiscovery()
        let collector = collect(discovery.events())
        await discovery.stop()
        #expect(await collector.value.isEmpty)
        discovery.start()  // ignored after stop
        #expect(!discovery.isDaemonAvailable)
    }

    @Test func eventsCanBeTakenAfterStartAndOnlyOnce() async throws {
        let discovery = makeDiscovery()
        discovery.start()
        try await Task.sleep(for: .milliseconds(100))
        let first = collect(discovery.events())
        let second = collect(discovery.events())
        #expect(await second.value.isEmpty)  // already finished
        await discovery.stop()
        await discovery.stop()  // idempotent
        let events = await first.value
        #expect(events.count == 1)  // buffered before anyone listened
    }

    @Test func manyInstancesStartAndStopConcurrently() async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let discovery = makeDiscovery()
                    discovery.start()
                    try? await Task.sleep(for: .milliseconds(20))
                    await discovery.stop()
                }
            }
        }
    }

    @Test func droppingARunningInstanceStopsItsThread() async throws {
        var discovery: ServiceDiscovery? = makeDiscovery()
        let collector = collect(discovery!.events())
        discovery!.start()
        try await Task.sleep(for: .milliseconds(50))
        discovery = nil
        let events = await collector.value  // ends because the engine stopped
        #expect(events.count == 1)
    }
}
