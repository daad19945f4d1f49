import DocumentModel

/// The node's named replications, as the admin API manages them (ShoalNode
/// implements it with the Replication module).
public protocol ReplicationController: Sendable {
    /// Starts or replaces replication `id` of `database` from Sync Gateway's JSON
    /// shape, once it is kept for the next start; throws `ReplicationControlError` for
    /// a bad definition or one that could not be kept (nothing changes then).
    func putReplication(database: String, id: String, definition: [String: JSON]) async throws
    /// Each replication's definition (without passwords), by ID.
    func replicationDefinitions(database: String) -> [String: JSON]
    /// Each replication's status (`_replicationStatus` fields), by ID.
    func replicationStatuses(database: String) -> [String: JSON]
    /// Stops and removes a replication; false when there is none. Throws
    /// `ReplicationControlError` when its removal could not be kept (it then stays).
    func removeReplication(database: String, id: String) async throws -> Bool
    /// Stops a replication (kept, with its status) or starts it again; false when there
    /// is none (`PUT /{db}/_replicationStatus/{id}?action=stop|start`).
    func setReplicationRunning(database: String, id: String, running: Bool) async -> Bool
}

/// Why a replication definition was refused (400), or why a change could not be kept
/// on disk (507 for a full disk, else 500).
public struct ReplicationControlError: Error, Sendable {
    public let reason: String
    public let status: Int
    public init(reason: String, status: Int = 400) {
        self.reason = reason
        self.status = status
    }
}
