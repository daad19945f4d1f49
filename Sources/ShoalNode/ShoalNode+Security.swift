import AccessControl
import DocumentModel
import DocumentStore
import JSEngine
import Logging

extension ShoalNode {
    /// The security of a database (§6): its sync function compiled (none configured:
    /// Sync Gateway's default routing, applied natively) and installed as the store's gate. Bad JavaScript fails the node's start with the line and Duktape's
    /// message.
    static func makeSecurity(for database: NodeConfiguration.Database, store: DocumentStore, passwordIterations: Int) throws -> DatabaseSecurity {
        let syncLogger = Logger(label: "Javascript")
        var function: SyncFunction?
        do {
            function = try database.sync.map { source in
                try SyncFunction(source: source, logger: { message in syncLogger.info("sync \(database.name): \(message)") })
            }
        } catch {
            throw ConfigLoader.ConfigError(message: "database \"\(database.name)\": \"sync\": \(error)")
        }
        return DatabaseSecurity(
            store: store, syncFunction: function, meshSecret: database.meshSecret.map(MeshSecret.init),
            meshRequiresTLS: database.meshTLS, passwordIterations: passwordIterations, logger: Logger(label: "Auth"))
    }

    /// Creates or updates the configured users and roles of every database.
    func bootstrapPrincipals() async throws {
        try await applyStoredConfig()
        for database in configuration.databases {
            guard let security = securities[database.name] else { continue }
            do {
                try await security.bootstrap(users: database.users, roles: database.roles)
            } catch let error as PrincipalError {
                throw ConfigLoader.ConfigError(message: "database \"\(database.name)\": \(error.reason)")
            }
            // Stored channels and grants follow the sync function in effect.
            let started = ContinuousClock.now
            if let resync = try await security.resyncIfFunctionChanged() {
                logger.notice("""
                    database \(database.name): the sync function changed: recomputed the access of \
                    \(resync.processed) documents (\(resync.changed) changed) in \(ContinuousClock.now - started)
                    """)
            }
            for collection in database.collections {
                let keyspace = Self.keyspace(database.name, collection.name)
                if let resync = try await securities[keyspace]?.resyncIfFunctionChanged() {
                    logger.notice("collection \(keyspace): the sync function changed: recomputed the access of \(resync.processed) documents")
                }
            }
            if database.users[User.guestName].map({ $0["disabled"]?.boolValue != true }) == true {
                logger.notice("database \(database.name): GUEST is enabled: unauthenticated requests are accepted")
            }
        }
    }

    public func security(database name: String) -> DatabaseSecurity? { securities[name] }
}

extension ShoalNode {
    /// `POST /{db}/_rekey`: the new key from `settings` (a config's `"encryption"` object),
    /// or none with `{"decrypt": true}`. Remember to point the config at the new key
    /// before the next start.
    public func rekey(database name: String, settings: [String: JSON]) async throws -> RekeyReport {
        guard let store = database(named: name) else { throw EncryptionError(.failed, database: name, reason: "no such database") }
        var key: EncryptionKey?
        if settings["decrypt"]?.boolValue == true, settings.count == 1 {
            key = nil
        } else {
            let source: EncryptionSource
            do {
                source = try EncryptionSource.parse(.object(settings), context: "database \"\(name)\"")
            } catch let error as ConfigLoader.ConfigError {
                throw EncryptionError(.badKey, database: name, reason: error.message + " (or {\"decrypt\": true})")
            }
            do throws(EncryptionError) {
                key = try source.load()
            } catch {
                throw error.naming(name)
            }
        }
        return try await store.rekey(to: key)
    }
}
