import Blocking
import AccessControl
import Crypto
import DocumentModel
import DocumentStore
import Foundation
import RESTServer

/// Run-time changes of a database's sync function and conflict policies (the admin
/// config API, `/{db}/_config…`), kept in the database's `info` table so that they
/// survive a restart.
///
/// The rule (docs/rest-api.md): a change made through the API wins over the config
/// file's setting until the file's setting itself changes. The stored change keeps a
/// fingerprint of the file's setting it replaced; at start, when the file's setting
/// no longer matches it, the file wins and the stored change is dropped (logged).
extension ShoalNode: DatabaseConfigurator {
    static let syncOverrideKey = "config_api_sync"
    static let conflictsOverrideKey = "config_api_conflicts"

    /// Where a setting in effect comes from.
    struct RuntimeSettings: Sendable {
        var syncFromAPI = false
        var conflictsFromAPI = false
        /// The `"conflicts"` object in effect (the file's shape).
        var conflicts: JSON = [:]
    }

    func fileSettings(_ name: String) -> NodeConfiguration.Database? {
        configuration.databases.first { $0.name == name }
    }

    public func databaseConfig(database name: String) -> JSON? {
        guard let file = fileSettings(name) else { return nil }
        let settings = runtimeSettings(name)
        let source = security(database: name)?.syncFunction?.source
        var config: [String: JSON] = [
            "name": .string(name),
            "server": .string(file.inMemory ? "walrus:" : "sqlite:"),
            "revs_limit": .int(Int64(file.revsLimit)),
            "max_document_size": .int(Int64(file.maxDocumentSize)),
            "sync": source.map { .string($0) } ?? .null,
            "sync_origin": .string(settings.syncFromAPI ? "admin_api" : (file.sync == nil ? "default" : "config_file")),
            "conflicts": settings.conflicts,
            "conflicts_origin": .string(settings.conflictsFromAPI ? "admin_api" : "config_file"),
            "mesh": [
                "enabled": .bool(file.meshEnabled), "group": .string(file.group), "max_peers": .int(Int64(file.maxPeers)),
            ],
        ]
        // Named collections as Sync Gateway 3 shows them, each with the sync function
        // in effect in it.
        var scopes: [String: [String: JSON]] = [:]
        for collection in file.collections {
            let sync = security(database: collection.name.keyspace(in: name))?.syncFunction?.source ?? collection.sync
            scopes[collection.name.scope, default: [:]][collection.name.name] = [
                "sync": sync.map { .string($0) } ?? .null,
                "conflicts": [
                    "default": .string(collection.conflicts.defaultPolicy.description),
                    "types": .object(collection.conflicts.byType.mapValues { .string($0.description) }),
                ],
            ]
        }
        if !scopes.isEmpty { config["scopes"] = .object(scopes.mapValues { ["collections": .object($0)] }) }
        return .object(config)
    }

    public func setSyncFunction(database name: String, source: String?) async throws(ConfigChangeError) -> JSON {
        guard let file = fileSettings(name), let security = security(database: name) else {
            throw ConfigChangeError(status: 404, reason: "no such database '\(name)'")
        }
        let function = try await compileSync(database: name, source: source ?? file.sync)
        do {
            let record: JSON? = source.map { ["file": .string(Self.fingerprint(file.sync ?? "")), "source": .string($0)] }
            try await database(named: name)?.setInfoValue(Self.syncOverrideKey, record?.canonicalString ?? "")
            security.replaceSyncFunction(function)
            updateRuntimeSettings(name) { $0.syncFromAPI = source != nil }
            let started = ContinuousClock.now
            let resync = try await security.resync(trigger: "config")
            logger.notice("database \(name): sync function \(source == nil ? "reset to the config file's" : "deployed through the admin API"); resynced \(resync.processed) documents (\(resync.changed) changed)")
            return [
                "ok": true, "sync_origin": .string(source == nil ? "config_file" : "admin_api"),
                "resync": [
                    "processed": .int(Int64(resync.processed)), "changed": .int(Int64(resync.changed)),
                    "milliseconds": .int((ContinuousClock.now - started).wholeMilliseconds),
                ],
            ]
        } catch {
            throw ConfigChangeError(status: error.httpStatus, reason: "cannot store the sync function: \(error.reason)")
        }
    }

    public func setConflictPolicies(database name: String, json: JSON) async throws(ConfigChangeError) -> JSON {
        guard let file = fileSettings(name), let monitor = conflictMonitors[name] else {
            throw ConfigChangeError(status: 404, reason: "no such database '\(name)'")
        }
        var parsed = file
        do {
            try ConfigLoader.parseConflicts(json, into: &parsed)
            let settings = parsed
            let script = try await BlockingPool.shared.perform { () throws in try Self.conflictScript(for: settings) }
            monitor.setPolicies(parsed.conflicts, script: script)
        } catch let error as ConfigLoader.ConfigError {
            throw ConfigChangeError(reason: error.message)
        } catch {
            throw ConfigChangeError(reason: "\(error)")
        }
        let record: JSON = ["file": .string(Self.fingerprint(Self.conflictsJSON(file).canonicalString)), "conflicts": json]
        do {
            try await database(named: name)?.setInfoValue(Self.conflictsOverrideKey, record.canonicalString)
        } catch {
            throw ConfigChangeError(status: error.httpStatus, reason: "cannot store the conflict policies: \(error.reason)")
        }
        updateRuntimeSettings(name) {
            $0.conflictsFromAPI = true
            $0.conflicts = Self.conflictsJSON(parsed)
        }
        return ["ok": true, "conflicts": Self.conflictsJSON(parsed)]
    }

    /// At start, before the access check: applies the changes stored through the API
    /// whose file setting is unchanged, and drops the others.
    func applyStoredConfig() async throws {
        for file in configuration.databases {
            let name = file.name
            updateRuntimeSettings(name) { $0.conflicts = Self.conflictsJSON(file) }
            guard let store = database(named: name) else { continue }
            if let record = try await storedRecord(store, Self.syncOverrideKey) {
                if record["file"]?.stringValue == Self.fingerprint(file.sync ?? ""), let source = record["source"]?.stringValue {
                    security(database: name)?.replaceSyncFunction(try await compileSync(database: name, source: source))
                    updateRuntimeSettings(name) { $0.syncFromAPI = true }
                    logger.notice("database \(name): using the sync function deployed through the admin API")
                } else {
                    try await store.setInfoValue(Self.syncOverrideKey, "")
                    logger.notice("database \(name): the config file's sync function changed; it replaces the one deployed through the admin API")
                }
            }
            if let record = try await storedRecord(store, Self.conflictsOverrideKey) {
                if record["file"]?.stringValue == Self.fingerprint(Self.conflictsJSON(file).canonicalString),
                   let conflicts = record["conflicts"] {
                    _ = try await setConflictPolicies(database: name, json: conflicts)
                } else {
                    try await store.setInfoValue(Self.conflictsOverrideKey, "")
                    logger.notice("database \(name): the config file's conflict policies changed; they replace those set through the admin API")
                }
            }
        }
    }

    private func storedRecord(_ store: DocumentStore, _ key: String) async throws -> JSON? {
        guard let text = try await store.infoValue(key), !text.isEmpty else { return nil }
        return try? JSON.parse(Array(text.utf8))
    }

    /// Compiles a sync function on the blocking pool (a compile blocks its caller).
    private func compileSync(database name: String, source: String?) async throws(ConfigChangeError) -> SyncFunction? {
        guard let source else { return nil }
        let logger = logger
        return try await BlockingPool.shared.perform { () throws(ConfigChangeError) -> SyncFunction? in
            do {
                return try SyncFunction(source: source, logger: { message in logger.info("sync \(name): \(message)") })
            } catch {
                throw ConfigChangeError(reason: "sync function: \(error)")
            }
        }
    }

    /// A database's `"conflicts"` setting in the config file's shape.
    static func conflictsJSON(_ database: NodeConfiguration.Database) -> JSON {
        var object: [String: JSON] = [
            "default": .string(database.conflicts.defaultPolicy.description),
            "types": .object(database.conflicts.byType.mapValues { .string($0.description) }),
            "type_field": .string(database.conflicts.typeField),
        ]
        if let resolver = database.conflictResolver { object["resolver"] = .string(resolver) }
        return .object(object)
    }

    static func fingerprint(_ text: String) -> String {
        Digests.hex(SHA256.hash(data: Data(text.utf8)))
    }

    func runtimeSettings(_ name: String) -> RuntimeSettings {
        runtime.withLock { $0[name] ?? RuntimeSettings() }
    }

    func updateRuntimeSettings(_ name: String, _ change: (inout RuntimeSettings) -> Void) {
        runtime.withLock { change(&$0[name, default: RuntimeSettings()]) }
    }
}
