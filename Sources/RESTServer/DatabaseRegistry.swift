import DocumentStore

/// The databases a server exposes, by name. `ShoalNode` implements it; the REST
/// layer only looks databases up.
public protocol DatabaseRegistry: Sendable {
    func database(named name: String) -> DocumentStore?
    var databaseNames: [String] { get }
    /// The conflict resolution of a database (nil: none).
    func conflictMonitor(database name: String) -> ConflictMonitor?
}

extension DatabaseRegistry {
    public func conflictMonitor(database name: String) -> ConflictMonitor? { nil }
}
