import DocumentStore
import Foundation
import Logging
import Synchronization

/// The named replications of a node, per database: started from the config file
/// or the admin API, listed, inspected and stopped.
public final class ReplicationManager: Sendable {
    private let dialer: any BLIPDialer
    /// The dialer of replications that dial as a client (`asClient`).
    private let clientDialer: any BLIPDialer
    private let logger: Logger
    private let replications = Mutex<[String: [String: Replicator]]>([:])

    public init(dialer: any BLIPDialer, clientDialer: (any BLIPDialer)? = nil, logger: Logger = Logger(label: "Replicate")) {
        self.dialer = dialer
        self.clientDialer = clientDialer ?? dialer
        self.logger = logger
    }

    /// Starts (or replaces) replication `configuration.id` of `store`.
    @discardableResult
    public func start(
        _ configuration: ReplicationConfiguration, store: DocumentStore,
        collections: [(name: CollectionName, store: DocumentStore)] = []
    ) async -> Replicator {
        let replicator = Replicator(
            store: store, configuration: configuration, dialer: configuration.asClient ? clientDialer : dialer, logger: logger,
            collections: collections)
        let previous = replications.withLock { all -> Replicator? in
            defer { all[store.name, default: [:]][configuration.id] = replicator }
            return all[store.name]?[configuration.id]
        }
        await previous?.stop()
        replicator.start()
        logger.info("replication \(configuration.id): \(store.name) \(configuration.direction.rawValue) \(configuration.remote)\(configuration.continuous ? " (continuous)" : "")")
        return replicator
    }

    public func replication(database: String, id: String) -> Replicator? {
        replications.withLock { $0[database]?[id] }
    }

    /// The replications of a database, by ID.
    public func replications(database: String) -> [String: Replicator] {
        replications.withLock { $0[database] ?? [:] }
    }

    /// Stops and forgets a replication; false if there was none.
    public func remove(database: String, id: String) async -> Bool {
        let replicator = replications.withLock { $0[database]?.removeValue(forKey: id) }
        guard let replicator else { return false }
        await replicator.stop()
        return true
    }

    /// Stops every replication (node shutdown); their checkpoints are saved.
    public func stopAll() async {
        let all = replications.withLock { all in
            defer { all.removeAll() }
            return all.values.flatMap(\.values)
        }
        for replicator in all { await replicator.stop() }
    }
}
