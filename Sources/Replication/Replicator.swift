import BLIP
import DocumentModel
import DocumentStore
import Foundation
import Logging
import Synchronization

/// An active replication with one peer: dials its BLIP endpoint, pushes and/or
/// pulls, saves checkpoints on both sides, and (when continuous) keeps going:
/// idle when caught up, awake on new changes, reconnecting with capped
/// exponential backoff and jitter when the connection is lost.
public final class Replicator: Sendable {
    public let configuration: ReplicationConfiguration
    public let store: DocumentStore
    public let progress = ReplicationProgress()
    let logger: Logger
    let dialer: any BLIPDialer
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let finished = Mutex<[CheckedContinuation<Void, Never>]>([])
    private let done = Mutex(false)
    /// The peer's node ID once known (a mesh link), asked on every connection: the
    /// revisions it sends are recorded as coming from it (`RevisionOrigin.peer`).
    private let peerNodeID: @Sendable () -> String?

    /// The collections replicated, with their stores, in `getCollections` order; only
    /// the default collection (`store`) for a replication that names none.
    public let collections: [(name: CollectionName, store: DocumentStore)]
    /// Replicate only the collections both sides have (mesh links): a collection the
    /// peer lacks is skipped instead of failing the replication, and a peer that does
    /// not know `getCollections` replicates the default collection alone.
    let sharedCollectionsOnly: Bool
    /// Shared with the other links of a mesh: fired when this replication's connection
    /// comes up; while reconnecting, its firing cuts the backoff and hedges a hung dial.
    let reconnectSignal: ReconnectSignal?

    public init(
        store: DocumentStore, configuration: ReplicationConfiguration, dialer: any BLIPDialer,
        logger: Logger = Logger(label: "Replicate"), collections: [(name: CollectionName, store: DocumentStore)] = [],
        sharedCollectionsOnly: Bool = false, reconnectSignal: ReconnectSignal? = nil,
        peerNodeID: @escaping @Sendable () -> String? = { nil }
    ) {
        self.reconnectSignal = reconnectSignal
        self.peerNodeID = peerNodeID
        self.store = store
        self.configuration = configuration
        self.dialer = dialer
        self.logger = logger
        self.collections = collections.isEmpty ? [(.default, store)] : collections
        self.sharedCollectionsOnly = sharedCollectionsOnly
    }

    /// True when only the default collection replicates, without `getCollections`.
    var defaultCollectionOnly: Bool { collections.count == 1 && collections[0].name.isDefault }

    public var status: ReplicationStatus { progress.status }

    /// The checkpoint's client ID: this database, the peer and the replication's shape.
    var checkpointClient: String { checkpointClient(store: store) }

    /// The checkpoint client ID of one collection (its store has its own identity).
    func checkpointClient(store: DocumentStore) -> String {
        var parts = [store.uuid, configuration.remote, configuration.direction.rawValue,
                     configuration.channels?.joined(separator: ",") ?? "", configuration.docIDs?.joined(separator: ",") ?? ""]
        if !store.collection.isDefault { parts.append(store.collection.description) }
        let key = parts.joined(separator: "|")
        return "shoal-" + Digests.hex(SHA1.hash(Array(key.utf8)))
    }

    /// Starts the replication in the background.
    public func start() {
        task.withLock { task in
            guard task == nil else { return }
            task = Task { await self.runLoop() }
        }
    }

    /// Stops it (checkpoints already saved stay) and waits for it to end.
    public func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
        progress.setState(.stopped)
    }

    /// Waits until a one-shot replication has finished (or the replication stopped).
    public func waitUntilFinished() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isDone = done.withLock { $0 }
            if isDone {
                continuation.resume()
            } else {
                finished.withLock { $0.append(continuation) }
                if done.withLock({ $0 }) { resumeWaiters() }
            }
        }
    }

    private func resumeWaiters() {
        let waiters = finished.withLock { waiters in
            defer { waiters.removeAll() }
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func runLoop() async {
        var attempt = 0
        let connected = AtomicFlag()
        defer {
            done.withLock { $0 = true }
            resumeWaiters()
        }
        while !Task.isCancelled {
            progress.setState(attempt == 0 ? .starting : .reconnecting)
            connected.value = false
            let reconnecting = attempt > 0
            do {
                try await ReconnectSignal.$current.withValue(reconnectSignal) {
                    try await dialer.dial(url: configuration.remote, username: configuration.username,
                                          password: configuration.password, heartbeat: configuration.heartbeat,
                                          pinnedCertificate: configuration.pinnedCertificate,
                                          subprotocols: offeredSubprotocols) { connection in
                        // The last error stays until this connection replicates (`setState(.running)`):
                        // a peer that refuses every attempt at the same step keeps showing why.
                        connected.value = true
                        // The peer is reachable again: so may be others of the mesh.
                        if reconnecting { self.reconnectSignal?.fire() }
                        try await self.replicate(over: connection)
                    }
                }
                if !configuration.continuous {
                    progress.update { $0.state = .stopped }
                    return
                }
                // A continuous replication whose connection closed: reconnect.
            } catch is CancellationError {
                break
            } catch {
                if Task.isCancelled { break }
                let message = "\(error)"
                logger.info("replication \(configuration.id) to \(configuration.remote): \(message)")
                progress.update { $0.lastError = message }
                if Self.isPermanent(error) && !configuration.retryRefusals {
                    progress.update { $0.state = .error }
                    return
                }
            }
            // A connection that got as far as replicating starts the backoff over.
            attempt = connected.value ? 1 : attempt + 1
            progress.setState(.reconnecting)
            let delay = Self.backoff(attempt: attempt, cap: configuration.maxBackoff)
            if let reconnectSignal {
                // Another link of the mesh coming up (a healed fault) ends the wait.
                await reconnectSignal.sleep(for: delay)
            } else {
                try? await Task.sleep(for: delay)
            }
        }
        progress.setState(.stopped)
    }

    /// Authentication and "no such database" failures do not get better by retrying.
    static func isPermanent(_ error: any Error) -> Bool {
        if let error = error as? BLIPError, [401, 403, 404].contains(error.code) && error.domain != "BLIP" { return true }
        if let error = error as? DialError { return error.permanent }
        return false
    }

    /// Exponential backoff from 250 ms, capped, with ±50% jitter.
    static func backoff(attempt: Int, cap: Duration) -> Duration {
        let base = Duration.milliseconds(250) * (1 << min(attempt - 1, 10))
        let capped = min(base, cap)
        return capped * Double.random(in: 0.5...1.0)
    }

    /// The WebSocket subprotocols the dial offers: `BLIP_3+CBMobile_4` first when the
    /// replication asks for versions (nil: the dialer's default, revision trees).
    var offeredSubprotocols: [String]? {
        configuration.versioning == .cbMobile3 ? nil : configuration.versioning.offers.map(\.subprotocol)
    }

    /// What the peer's revisions are recorded as coming from (`RevisionOrigin.peer`),
    /// and whether `connection` names documents by versions (the peer chose
    /// `BLIP_3+CBMobile_4`).
    func peerAccess(_ connection: BLIPConnection) -> PeerAccess {
        let nodeID = peerNodeID()
        var dialect = PeerDialect(subprotocol: connection.subprotocol, peer: nodeID == nil ? .server : .shoal)
        dialect.actsAsClient = configuration.asClient
        let access = PeerAccess(dialect: dialect, origin: .peer(node: nodeID, detail: configuration.redactedRemote))
        if let subprotocol = connection.subprotocol { progress.update { $0.subprotocol = subprotocol } }
        return access
    }

    /// Runs push and/or pull over one connection: of the default collection alone, or
    /// of every collection after `getCollections` (`Replicator+Collections.swift`).
    private func replicate(over connection: BLIPConnection) async throws {
        if !defaultCollectionOnly {
            try await replicateCollections(over: connection)
            return
        }
        let session = ReplicationSession(
            store: store, connection: connection, progress: progress, access: peerAccess(connection), logger: logger)
        defer { session.close() }
        progress.setState(.running)
        try await replicate(session: session, client: checkpointClient, remote: .fetch) { session.isCaughtUp }
    }

    /// Where the peer's copy of a collection's checkpoint comes from.
    enum RemoteCheckpoint {
        /// `getCheckpoint`.
        case fetch
        /// The `getCollections` reply's entry (nil: the peer has none).
        case given((rev: String, body: [String: JSON])?)
    }

    /// Runs push and/or pull of one collection's session, saving its checkpoint.
    /// `caughtUp` tells the continuous monitor when every collection is idle.
    func replicate(
        session: ReplicationSession, client: String, remote: RemoteCheckpoint, caughtUp: @escaping @Sendable () -> Bool
    ) async throws {
        let store = session.store
        let connection = session.connection
        let checkpoint = try await loadCheckpoint(session: session, client: client, remote: remote)
        let state = CheckpointState(checkpoint: checkpoint.value, remoteRev: checkpoint.remoteRev)
        // Push and pull both advance the checkpoint; saves run one at a time.
        let saving = AsyncLimiter(limit: 1)
        let save: @Sendable () async -> Void = { [store] in
            await saving.run {
                let body: [String: JSON] = state.current.json.objectValue ?? [:]
                let id = ReplicationSession.checkpointID(client)
                _ = try? await store.putLocal(id, body: body, rev: (try? await store.localDocument(id))?.rev)
                if let rev = try? await session.saveRemoteCheckpoint(client: client, rev: state.remoteRev, body: body) {
                    state.setRemoteRev(rev)
                }
            }
        }
        do {
            try await runDirections(
                session: session, connection: connection, checkpoint: checkpoint.value, state: state, save: save,
                caughtUp: caughtUp)
        } catch {
            // Stopped or disconnected: keep what was delivered so far.
            await save()
            throw error
        }
        await save()
        // A closed connection ends a one-shot push quietly (its feed stops sending), and
        // a continuous run for good: either way it was not done, so it is tried again.
        if connection.isClosed { throw BLIPError.connectionClosed }
    }

    /// Push and/or pull (and, when continuous, the idle/running monitor) until done.
    private func runDirections(
        session: ReplicationSession, connection: BLIPConnection, checkpoint: ReplicationSession.Checkpoint,
        state: CheckpointState, save: @escaping @Sendable () async -> Void, caughtUp: @escaping @Sendable () -> Bool
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            if configuration.direction.pushes {
                progress.update { $0.pushedThrough = checkpoint.local }
                group.addTask {
                    try await session.push(
                        since: checkpoint.local, continuous: self.configuration.continuous,
                        docIDs: self.configuration.docIDs, batchSize: self.configuration.batchSize
                    ) { delivered in
                        state.update { $0.local = delivered }
                        self.progress.update { $0.pushedThrough = delivered }
                        await save()
                    }
                }
            }
            if configuration.continuous {
                group.addTask {
                    // `idle` while caught up both ways, `running` while there is work
                    // (checked as often as checkpoints are saved: an idle link's wake-ups
                    // are most of an idle mesh node's CPU).
                    while !Task.isCancelled && !connection.isClosed {
                        try await Task.sleep(for: ReplicationSession.checkpointInterval)
                        let caughtUp = caughtUp()
                        self.progress.update { status in
                            if status.state == .running && caughtUp { status.state = .idle }
                            else if status.state == .idle && !caughtUp { status.state = .running }
                        }
                    }
                }
            }
            if configuration.direction.pulls {
                group.addTask {
                    try await session.pull(
                        since: checkpoint.remote, continuous: self.configuration.continuous,
                        channels: self.configuration.channels, docIDs: self.configuration.docIDs,
                        batchSize: self.configuration.batchSize, purgeOnRemoval: self.configuration.purgeOnRemoval
                    ) { through in
                        state.update { $0.remote = through }
                        await save()
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// The checkpoint to resume from: the local copy if the peer's agrees, else the
    /// older of the two (never skipping anything), else the start.
    private func loadCheckpoint(
        session: ReplicationSession, client: String, remote source: RemoteCheckpoint
    ) async throws -> (value: ReplicationSession.Checkpoint, remoteRev: String?) {
        let local = try? await session.store.localDocument(ReplicationSession.checkpointID(client))
        let remote: (rev: String, body: [String: JSON])?
        switch source {
        case .fetch: remote = try await session.remoteCheckpoint(client: client)
        case .given(let given): remote = given
        }
        guard let localBody = local?.body, let remote else {
            return (ReplicationSession.Checkpoint(), remote?.rev)
        }
        let mine = ReplicationSession.Checkpoint(localBody)
        let theirs = ReplicationSession.Checkpoint(remote.body)
        if mine == theirs { return (mine, remote.rev) }
        var merged = ReplicationSession.Checkpoint(local: min(mine.local, theirs.local))
        merged.remote = mine.remote == theirs.remote ? mine.remote : nil
        return (merged, remote.rev)
    }
}

/// The checkpoint being advanced by push and pull at once.
final class CheckpointState: Sendable {
    private let state: Mutex<(ReplicationSession.Checkpoint, String?)>

    init(checkpoint: ReplicationSession.Checkpoint, remoteRev: String?) {
        state = Mutex((checkpoint, remoteRev))
    }

    var current: ReplicationSession.Checkpoint { state.withLock { $0.0 } }
    var remoteRev: String? { state.withLock { $0.1 } }
    func update(_ change: (inout ReplicationSession.Checkpoint) -> Void) { state.withLock { change(&$0.0) } }
    func setRemoteRev(_ rev: String) { state.withLock { $0.1 = rev } }
}

/// Opens a BLIP connection to a peer and runs `session` over it until it returns
/// (then closes) or the connection ends. The WebSocket client implements it; tests
/// may dial in-process.
public protocol BLIPDialer: Sendable {
    /// Connects to `url` and runs `session` over the connection. `pinnedCertificate`
    /// (PEM text or a file path) replaces the chain check of a `wss://` server.
    func dial(
        url: String, username: String?, password: String?, heartbeat: Duration, pinnedCertificate: String?,
        session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws

    /// The same, offering the WebSocket `subprotocols` in that order (nil: the dialer's
    /// default, `BLIP_3+CBMobile_3`); the one the peer chose is the connection's
    /// `subprotocol`. A dialer that is not a WebSocket ignores the offer.
    func dial(
        url: String, username: String?, password: String?, heartbeat: Duration, pinnedCertificate: String?,
        subprotocols: [String]?, session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws
}

extension BLIPDialer {
    public func dial(
        url: String, username: String?, password: String?, heartbeat: Duration, pinnedCertificate: String?,
        subprotocols: [String]?, session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        try await dial(
            url: url, username: username, password: password, heartbeat: heartbeat, pinnedCertificate: pinnedCertificate,
            session: session)
    }

    /// Dials with the system's trust roots for `wss://`.
    public func dial(
        url: String, username: String?, password: String?, heartbeat: Duration,
        session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        try await dial(url: url, username: username, password: password, heartbeat: heartbeat, pinnedCertificate: nil,
                       session: session)
    }
}

/// A dial that failed before BLIP started (e.g. HTTP 401 on the upgrade).
public struct DialError: Error, Sendable, CustomStringConvertible {
    public let description: String
    /// True when retrying cannot help (bad credentials, unknown database).
    public let permanent: Bool

    public init(_ description: String, permanent: Bool) {
        self.description = description
        self.permanent = permanent
    }
}
