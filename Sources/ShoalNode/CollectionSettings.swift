import DocumentModel
import DocumentStore

/// One named collection of a database as the config declares it (Sync Gateway 3's
/// `"scopes": {scope: {"collections": {name: {…}}}}`): its own sync function and
/// conflict resolution. The default collection's settings are the database's own.
public struct CollectionSettings: Sendable, Equatable {
    public var name: CollectionName
    /// The collection's sync function (nil: Sync Gateway's default routing).
    public var sync: String?
    /// How the collection's conflicts are resolved.
    public var conflicts = ConflictPolicies()
    /// The `js` policy's function.
    public var conflictResolver: String?

    public init(name: CollectionName, sync: String? = nil) {
        self.name = name
        self.sync = sync
    }
}
