import DocumentModel
import DocumentStore

extension ConfigLoader {
    static let collectionKeys: Set<String> = ["sync", "conflicts"]

    /// `"scopes": {"_default": {"collections": {"lists": {"sync": "…", "conflicts": {…}}}}}`
    /// (Sync Gateway 3). `_default._default` configures the default collection (its
    /// `sync` and `conflicts` are the database's); every other entry is a named collection.
    static func parseScopes(_ value: JSON, into database: inout NodeConfiguration.Database, warnings: inout [String]) throws {
        let name = database.name
        guard let scopes = value.objectValue else {
            throw ConfigError(message: "database \"\(name)\": \"scopes\" must be an object of scopes by name")
        }
        var collections: [CollectionSettings] = []
        for (scope, scopeValue) in scopes.sorted(by: { $0.key < $1.key }) {
            guard let scopeObject = scopeValue.objectValue, let entries = scopeObject["collections"]?.objectValue else {
                throw ConfigError(message: "database \"\(name)\": scope \"\(scope)\" must be an object with a \"collections\" object")
            }
            for key in scopeObject.keys.sorted() where key != "collections" {
                warnings.append("database \"\(name)\": scope \"\(scope)\": key \"\(key)\" is not used by Shoal; ignoring it")
            }
            for (collection, settingsValue) in entries.sorted(by: { $0.key < $1.key }) {
                guard let collectionName = CollectionName(scope: scope, name: collection) else {
                    throw ConfigError(message: "database \"\(name)\": invalid collection name \"\(scope).\(collection)\": use 1–251 letters, digits and _-%, not starting with _ or %")
                }
                guard let settings = settingsValue.objectValue else {
                    throw ConfigError(message: "database \"\(name)\": collection \"\(collectionName)\" must be an object")
                }
                for key in settings.keys.sorted() where !collectionKeys.contains(key) {
                    warnings.append("database \"\(name)\": collection \"\(collectionName)\": key \"\(key)\" is not used by Shoal; ignoring it")
                }
                // The database-level parsers, on a scratch database named after the collection.
                var scratch = NodeConfiguration.Database(name: "\(name)\" collection \"\(collectionName)")
                scratch.sync = collectionName.isDefault ? database.sync : nil
                try parsePrincipals(settings.filter { $0.key == "sync" }, into: &scratch)
                if let conflicts = settings["conflicts"] { try parseConflicts(conflicts, into: &scratch) }
                if collectionName.isDefault {
                    database.sync = scratch.sync
                    if settings["conflicts"] != nil {
                        database.conflicts = scratch.conflicts
                        database.conflictResolver = scratch.conflictResolver
                    }
                    continue
                }
                var entry = CollectionSettings(name: collectionName, sync: scratch.sync)
                entry.conflicts = scratch.conflicts
                entry.conflictResolver = scratch.conflictResolver
                collections.append(entry)
            }
        }
        database.collections = collections
    }
}
