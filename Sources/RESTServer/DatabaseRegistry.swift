import AccessControl
import DocumentModel
import DocumentStore
import Query

/// The databases a server exposes, by name. `ShoalNode` implements it; the REST
/// layer only looks databases up.
public protocol DatabaseRegistry: Sendable {
    func database(named name: String) -> DocumentStore?
    var databaseNames: [String] { get }
    /// The conflict resolution of a database (nil: none).
    func conflictMonitor(database name: String) -> ConflictMonitor?
    /// The users, roles and sync function of a database (nil: no access control;
    /// every request acts as an administrator).
    func security(database name: String) -> DatabaseSecurity?
    /// Re-encrypts a database with the key `settings` names (a config's `"encryption"`
    /// object, or `{"decrypt": true}`); `POST /{db}/_rekey`.
    func rekey(database name: String, settings: [String: JSON]) async throws -> RekeyReport
    /// The map/reduce views of a database (nil: this server has none; view endpoints 501).
    func views(database name: String) -> ViewEngine?
}

extension DatabaseRegistry {
    public func conflictMonitor(database name: String) -> ConflictMonitor? { nil }
    public func security(database name: String) -> DatabaseSecurity? { nil }
    public func views(database name: String) -> ViewEngine? { nil }
    public func rekey(database name: String, settings: [String: JSON]) async throws -> RekeyReport {
        throw HTTPFailure(.notImplemented, "not_implemented", "this server cannot rekey databases")
    }
}
