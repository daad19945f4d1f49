import BLIP
import DocumentStore
import Foundation
import Logging
import Replication
import Synchronization

/// Dials a peer store in the same process: each dial makes a `LoopbackTransport`
/// pair (optionally wrapped in a `FaultyTransport` made by `faults`) with a passive
/// `ReplicationSession` on the far end (with what `access` gives that dial, else full
/// access). Counts dials for tests.
public final class LoopbackDialer: BLIPDialer, Sendable {
    public let peer: DocumentStore
    private let faults: (@Sendable (Int) -> FaultyTransport.Faults?)?
    private let access: (@Sendable (Int) -> PeerAccess)?
    private let dials = Mutex(0)
    /// Counters of the passive side of every connection so far.
    public let peerProgress = ReplicationProgress()

    /// `faults(n)` gives the faults to inject on the n-th dial (from 1), or nil for none;
    /// `access(n)` what the passive side grants the n-th dial.
    public init(
        peer: DocumentStore, faults: (@Sendable (Int) -> FaultyTransport.Faults?)? = nil,
        access: (@Sendable (Int) -> PeerAccess)? = nil
    ) {
        self.peer = peer
        self.faults = faults
        self.access = access
    }

    public var dialCount: Int { dials.withLock { $0 } }

    public func dial(
        url: String, username: String?, password: String?, heartbeat: Duration, pinnedCertificate: String?,
        session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        let number = dials.withLock { count in
            count += 1
            return count
        }
        let (near, far) = LoopbackTransport.pair()
        let faulty = faults?(number).map { FaultyTransport(wrapping: near, inbound: near.inbound, faults: $0) }
        let nearTransport: any BLIPTransport = faulty ?? near
        let nearInbound = faulty?.inbound ?? near.inbound
        let client = BLIPConnection(transport: nearTransport, logger: Logger(label: "BLIP"))
        let server = BLIPConnection(transport: far, logger: Logger(label: "BLIP"))
        let passive = ReplicationSession(
            store: peer, connection: server, progress: peerProgress, access: access?(number) ?? .full)
        // As over a socket: the dial fails with the client's close error (or the
        // session's); the passive side's end alone decides nothing.
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                defer { passive.close() }
                try? await server.run(inbound: far.inbound)
                return false
            }
            group.addTask {
                try await client.run(inbound: nearInbound)
                return true
            }
            group.addTask {
                try await session(client)
                await client.close()
                return true
            }
            defer { group.cancelAll() }
            while let clientSide = try await group.next() {
                if clientSide && client.isClosed { break }
            }
        }
    }
}
