import BLIP
import DocumentModel
import DocumentStore
import Foundation
import Replication
import Synchronization
import Testing
import TestSupport

/// A refused dial (401: a mesh proof outside the peer's clock window, a secret not set
/// yet) ends a user's replication with an error, as Couchbase Lite's does, but a mesh
/// link (`retryRefusals`) keeps redialing and links once the refusal goes away. Found by
/// a chaos run: a node whose clock had jumped was refused by every peer, and after its
/// clock was set right it never rejoined.
@Suite struct RefusalRetryTests {
    /// Refuses the first `refusals` dials as the peer's server would, then connects.
    final class RefusingDialer: BLIPDialer {
        let inner: LoopbackDialer
        let refusals: Int
        let count = Mutex(0)

        init(peer: DocumentStore, refusals: Int) {
            inner = LoopbackDialer(peer: peer)
            self.refusals = refusals
        }

        func dial(
            url: String, username: String?, password: String?, heartbeat: Duration, pinnedCertificate: String?,
            session: @escaping @Sendable (BLIPConnection) async throws -> Void
        ) async throws {
            let number = count.withLock { count in
                count += 1
                return count
            }
            if number <= refusals {
                throw DialError(
                    "HTTP 401 from \(url): The clocks of this node and the dialing node differ by 3600 s", permanent: true)
            }
            try await inner.dial(
                url: url, username: username, password: password, heartbeat: heartbeat, pinnedCertificate: pinnedCertificate,
                session: session)
        }
    }

    static func configuration(retry: Bool) -> ReplicationConfiguration {
        var configuration = ReplicationConfiguration(
            id: "link", remote: "ws://peer/db", direction: .pushAndPull, continuous: true, maxBackoff: .milliseconds(50))
        configuration.retryRefusals = retry
        return configuration
    }

    @Test func aMeshLinkRedialsUntilTheRefusalGoesAway() async throws {
        let local = try await TestStore.make()
        let peer = try await TestStore.make()
        defer { local.destroy(); peer.destroy() }
        let rev = try await peer.store.put("written-while-refused", ["v": 1]).revID
        let dialer = RefusingDialer(peer: peer.store, refusals: 3)
        let replicator = Replicator(store: local.store, configuration: Self.configuration(retry: true), dialer: dialer)
        replicator.start()
        let arrived = await eventually(timeout: .seconds(20)) {
            (try? await local.store.metadata("written-while-refused"))?.tree.leaves == [rev]
        }
        await replicator.stop()
        #expect(arrived, "\(replicator.status)")
        #expect(dialer.count.withLock { $0 } >= 4)
    }

    @Test func aUsersReplicationStopsAtARefusal() async throws {
        let local = try await TestStore.make()
        let peer = try await TestStore.make()
        defer { local.destroy(); peer.destroy() }
        let dialer = RefusingDialer(peer: peer.store, refusals: 1)
        let replicator = Replicator(store: local.store, configuration: Self.configuration(retry: false), dialer: dialer)
        replicator.start()
        let stopped = await eventually(timeout: .seconds(10)) { replicator.status.state == .error }
        try await Task.sleep(for: .milliseconds(300))
        await replicator.stop()
        #expect(stopped)
        #expect(dialer.count.withLock { $0 } == 1, "a refusal is not retried")
        #expect(replicator.status.lastError?.contains("HTTP 401") == true)
    }
}
