import DocumentModel

/// Changes a database's configuration while the node runs (Sync Gateway 3's database
/// config API, `/{db}/_config…` on the admin port). ShoalNode implements it: it checks
/// a change (compiles JavaScript, parses policies), stores it durably and applies it.
public protocol DatabaseConfigurator: Sendable {
    /// `GET /{db}/_config`: the database's configuration in effect (nil: no such database).
    func databaseConfig(database: String) -> JSON?
    /// `PUT /{db}/_config/sync`: compiles `source` (nil: back to the config file's
    /// function), stores it, installs it and resyncs; answers with what was done.
    func setSyncFunction(database: String, source: String?) async throws(ConfigChangeError) -> JSON
    /// `PUT /{db}/_config/conflicts`: parses the `"conflicts"` object of the config file's
    /// shape, stores it and installs it; answers with the policies in effect.
    func setConflictPolicies(database: String, json: JSON) async throws(ConfigChangeError) -> JSON
}

/// Why a configuration change was refused (400 with the reason unless said).
public struct ConfigChangeError: Error, Sendable {
    public let status: Int
    public let reason: String

    public init(status: Int = 400, reason: String) {
        self.status = status
        self.reason = reason
    }
}
