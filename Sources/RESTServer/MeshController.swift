import DocumentModel

/// The node's mesh status, as the admin API shows it (ShoalNode implements it).
public protocol MeshController: Sendable {
    /// `GET /_mesh`: node ID, groups, discovery state.
    func meshStatus() -> JSON
    /// `GET /{db}/_peers`: each peer of the database's mesh; nil when it takes no part.
    func meshPeers(database: String) -> JSON?
    /// Node metrics in Prometheus text format (peers, replication, conflicts, sizes).
    func metricsText() -> String
}
