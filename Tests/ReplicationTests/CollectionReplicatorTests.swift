import DocumentModel
import DocumentStore
import Foundation
import Replication
import Synchronization
import Testing
import TestSupport

/// The active side of named collections against a peer from before them (a plain
/// `ReplicationSession`, which answers `getCollections` with ERR BLIP/404).
@Suite struct CollectionReplicatorTests {
    let lists = CollectionName(scope: "_default", name: "lists")!

    @Test func aMeshLinkToAnOlderPeerReplicatesTheDefaultCollection() async throws {
        let local = try await TestStore.make(inMemory: true)
        let remote = try await TestStore.make(inMemory: true)
        defer { local.destroy(); remote.destroy() }
        let localLists = try local.store.collection(lists)
        try await local.store.put("d1", ["n": 1])
        try await localLists.put("l1", ["n": 2])
        try await remote.store.put("d2", ["n": 3])
        let configuration = ReplicationConfiguration(id: "mesh", remote: "ws://peer/db", direction: .pushAndPull)
        let replicator = Replicator(
            store: local.store, configuration: configuration, dialer: LoopbackDialer(peer: remote.store),
            collections: [(.default, local.store), (lists, localLists)], sharedCollectionsOnly: true)
        replicator.start()
        await replicator.waitUntilFinished()
        #expect(replicator.status.lastError == nil, "\(replicator.status)")
        #expect(try await remote.store.changes(since: 0).map(\.docID).sorted() == ["d1", "d2"])
        #expect(try await local.store.changes(since: 0).map(\.docID).sorted() == ["d1", "d2"])
    }

    @Test func aNamedReplicationOfCollectionsNeedsAPeerThatHasThem() async throws {
        let local = try await TestStore.make(inMemory: true)
        let remote = try await TestStore.make(inMemory: true)
        defer { local.destroy(); remote.destroy() }
        let localLists = try local.store.collection(lists)
        let configuration = ReplicationConfiguration(id: "named", remote: "ws://peer/db", direction: .push)
        let replicator = Replicator(
            store: local.store, configuration: configuration, dialer: LoopbackDialer(peer: remote.store),
            collections: [(lists, localLists)])
        replicator.start()
        // Not a mesh link: the peer's "no handler" fails it (and it keeps retrying, as a
        // BLIP-level error may be transient).
        // Each retry clears the error when it connects: poll often, and say what was seen.
        let seen = Mutex<Set<String>>([])
        // Generous: in full runs on two cores this loopback replication sometimes waits
        // tens of seconds for a turn on the cooperative pool (cause not found).
        let refused = await eventually(timeout: .seconds(90), every: .milliseconds(2)) {
            guard let error = replicator.status.lastError else { return false }
            seen.withLock { _ = $0.insert(error) }
            return error.contains("No handler for BLIP request")
        }
        #expect(refused, "errors seen: \(seen.withLock { $0 }); status \(replicator.status)")
        await replicator.stop()
    }
}
