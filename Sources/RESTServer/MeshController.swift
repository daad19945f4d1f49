import DocumentModel

/// The node's mesh status, as the admin API shows it (ShoalNode implements it).
public protocol MeshController: Sendable {
    /// `GET /_mesh`: node ID, groups (each with its peers and whether it is in step with
    /// all of them), discovery state.
    func meshStatus() async -> JSON
    /// `GET /{db}/_peers`: each peer of the database's mesh with what is pending each way
    /// and whether the link is in step, the database's latest sequence, and whether it is
    /// in step with every peer; nil when it takes no part.
    func meshPeers(database: String) async -> JSON?
    /// Node metrics in Prometheus text format (peers, replication, conflicts, sizes).
    func metricsText() -> String
}
