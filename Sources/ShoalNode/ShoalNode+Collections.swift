import DocumentModel
import DocumentStore

/// Named collections (Sync Gateway 3 scopes and collections): each is served under the
/// keyspace name `db.scope.collection`, with its own store (tables in the database's
/// file), security (its sync function, the database's users) and conflict resolution.
extension ShoalNode {
    /// The registry name of a collection: the database's name for the default one, else
    /// `db.scope.collection` (database names cannot contain dots).
    public static func keyspace(_ database: String, _ collection: CollectionName) -> String {
        collection.keyspace(in: database)
    }

    /// The configuration of `database` restricted to one named collection: the
    /// collection's sync function and conflict settings under the keyspace's name.
    static func collectionDatabase(
        _ database: NodeConfiguration.Database, _ collection: CollectionSettings
    ) -> NodeConfiguration.Database {
        var copy = database
        copy.name = keyspace(database.name, collection.name)
        copy.sync = collection.sync
        copy.conflicts = collection.conflicts
        copy.conflictResolver = collection.conflictResolver
        copy.collections = []
        copy.users = [:]
        copy.roles = [:]
        copy.replications = [:]
        return copy
    }

    /// Every database and every named collection, as configurations (collections after
    /// their database).
    static func keyspaces(of configuration: NodeConfiguration) -> [(database: NodeConfiguration.Database, collection: CollectionName)] {
        configuration.databases.flatMap { database in
            [(database, CollectionName.default)] + database.collections.map { (collectionDatabase(database, $0), $0.name) }
        }
    }

    /// The stores of a database's collections by name, the default one included (the
    /// collections a mesh link replicates).
    public func collectionStores(database: String) -> [CollectionName: DocumentStore] {
        guard let config = configuration.databases.first(where: { $0.name == database }),
              let store = self.database(named: database)
        else { return [:] }
        var result: [CollectionName: DocumentStore] = [.default: store]
        for collection in config.collections {
            if let named = self.database(named: Self.keyspace(database, collection.name)) { result[collection.name] = named }
        }
        return result
    }
}
