import AccessControl
import DocumentModel
import DocumentStore
import Foundation
import Replication
import RESTServer

/// Reads a config file in Sync Gateway's shape into a `NodeConfiguration`.
///
/// Accepts Sync Gateway's backquoted multi-line strings. Keys Shoal does not use
/// (yet) are accepted and reported as warnings; malformed values are errors.
public enum ConfigLoader {
    /// A config file that cannot be used, with the reason.
    public struct ConfigError: Error, CustomStringConvertible, Equatable {
        public let message: String
        public var description: String { message }
    }

    /// The result: the configuration plus warnings about ignored keys.
    public struct Loaded: Sendable {
        public var configuration: NodeConfiguration
        public var warnings: [String]
        /// True when the file has a `databases` object (then `--db` does not apply).
        public var namesDatabases: Bool
    }

    static let topLevelKeys: Set<String> = [
        "interface", "adminInterface", "log", "databases", "data", "maxRequestBytes", "heartbeat", "peers", "discovery",
        "httpIdleTimeout", "SSLCert", "SSLKey", "CORS", "nemesis",
    ]
    static let databaseKeys: Set<String> = [
        "server", "revs_limit", "max_document_size", "durability", "replications", "mesh", "conflicts", "users", "roles", "sync",
        "encryption", "scopes",
    ]

    public static func load(path: String, base: NodeConfiguration = NodeConfiguration()) throws -> Loaded {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError(message: "cannot read config file \(path)")
        }
        return try load(text: String(decoding: data, as: UTF8.self), base: base)
    }

    public static func load(text: String, base: NodeConfiguration = NodeConfiguration()) throws -> Loaded {
        let json: JSON
        do {
            json = try JSON.parse(try convertBackquotes(text))
        } catch let error as ConfigError {
            throw error
        } catch {
            throw ConfigError(message: "config is not valid JSON: \(error)")
        }
        guard let root = json.objectValue else { throw ConfigError(message: "config must be a JSON object") }
        var config = base
        var warnings: [String] = []
        for key in root.keys.sorted() where !topLevelKeys.contains(key) && !isComment(key) {
            warnings.append("config key \"\(key)\" is not used by Shoal yet; ignoring it")
        }
        if let value = root["interface"] {
            config.publicAddress = try address(value, key: "interface", defaultHost: "0.0.0.0")
        }
        if let value = root["adminInterface"] {
            config.adminAddress = try address(value, key: "adminInterface", defaultHost: "127.0.0.1")
        }
        for (key, path) in [("SSLCert", \NodeConfiguration.sslCertificatePath), ("SSLKey", \.sslKeyPath)] {
            guard let value = root[key] else { continue }
            guard let text = value.stringValue, !text.isEmpty else {
                throw ConfigError(message: "\"\(key)\" must be the path of a PEM file")
            }
            config[keyPath: path] = text
        }
        if (config.sslCertificatePath == nil) != (config.sslKeyPath == nil) {
            throw ConfigError(message: "\"SSLCert\" and \"SSLKey\" go together: give both or neither")
        }
        if let value = root["data"] {
            guard let dir = value.stringValue, !dir.isEmpty else { throw ConfigError(message: "\"data\" must be a path") }
            config.dataDirectory = dir
        }
        if let value = root["maxRequestBytes"] {
            guard let bytes = value.intValue, bytes > 0 else { throw ConfigError(message: "\"maxRequestBytes\" must be a positive integer") }
            config.maxRequestBytes = Int(bytes)
        }
        if let value = root["heartbeat"] {
            guard let seconds = value.doubleValue, seconds > 0, seconds * 1000 < Double(Int.max) else {
                throw ConfigError(message: "\"heartbeat\" must be a positive number of seconds")
            }
            config.heartbeat = .milliseconds(Int(seconds * 1000))
        }
        if let value = root["httpIdleTimeout"] {
            guard let seconds = value.doubleValue, seconds >= 0, seconds * 1000 < Double(Int.max) else {
                throw ConfigError(message: "\"httpIdleTimeout\" must be a number of seconds (0: no limit)")
            }
            config.httpIdleTimeout = seconds == 0 ? nil : .milliseconds(Int(seconds * 1000))
        }
        if let value = root["peers"] {
            guard let urls = value.arrayValue?.compactMap(\.stringValue), urls.count == value.arrayValue?.count else {
                throw ConfigError(message: "\"peers\" must be an array of URLs like \"ws://host:4984/db\"")
            }
            for url in urls where ReplicationConfiguration.normalize(remote: url) == nil {
                throw ConfigError(message: "peer \"\(url)\" is not a ws://, wss://, http:// or https:// URL naming a database")
            }
            config.peers = urls
        }
        if let value = root["discovery"] {
            guard let enabled = value.boolValue else { throw ConfigError(message: "\"discovery\" must be true or false") }
            config.discovery = enabled
        }
        if let value = root["log"] {
            guard let keys = value.arrayValue?.compactMap(\.stringValue) else {
                throw ConfigError(message: "\"log\" must be an array of log keys")
            }
            config.logKeys = Set(keys)
        }
        if let value = root["CORS"] {
            config.cors = try cors(value)
        }
        if let value = root["nemesis"] {
            config.nemesis = try nemesis(value)
        }
        if let value = root["databases"] {
            guard let databases = value.objectValue else { throw ConfigError(message: "\"databases\" must be an object") }
            config.databases = try databases.keys.sorted().map { name in
                try database(name: name, databases[name]!, warnings: &warnings)
            }
        }
        return Loaded(configuration: config, warnings: warnings, namesDatabases: root["databases"] != nil)
    }

    /// `"nemesis": {"enabled": true, "max_duration": 600}` (seconds; every fault lifts
    /// itself within it).
    static func nemesis(_ value: JSON) throws -> NemesisSettings {
        guard let object = value.objectValue else {
            throw ConfigError(message: "\"nemesis\" must be an object like {\"enabled\": true}")
        }
        var settings = NemesisSettings()
        for key in object.keys.sorted() where !["enabled", "max_duration"].contains(key) && !isComment(key) {
            throw ConfigError(message: "\"nemesis\" has no setting \"\(key)\" (enabled, max_duration)")
        }
        if let enabled = object["enabled"] {
            guard let on = enabled.boolValue else { throw ConfigError(message: "\"nemesis.enabled\" must be true or false") }
            settings.enabled = on
        }
        if let most = object["max_duration"] {
            guard let seconds = most.doubleValue, seconds >= 1, seconds <= 86_400 else {
                throw ConfigError(message: "\"nemesis.max_duration\" must be a number of seconds from 1 to 86400")
            }
            settings.maxDuration = .milliseconds(Int64(seconds * 1000))
        }
        return settings
    }

    /// `"CORS": {"origin": [...], "loginorigin": [...], "headers": [...], "maxAge": 600,
    /// "admin": false}`. Key names are matched without regard to case, as Sync Gateway's
    /// JSON decoding does (seed 004 writes `"Origin"`).
    static func cors(_ value: JSON) throws -> CORSPolicy {
        guard let object = value.objectValue else { throw ConfigError(message: "\"CORS\" must be an object") }
        var policy = CORSPolicy()
        for (key, entry) in object.sorted(by: { $0.key < $1.key }) {
            func strings() throws -> [String] {
                guard let items = entry.arrayValue?.compactMap(\.stringValue), items.count == entry.arrayValue?.count else {
                    throw ConfigError(message: "CORS \"\(key)\" must be an array of strings")
                }
                return items
            }
            switch key.lowercased() {
            case "origin": policy.origins = try strings()
            case "loginorigin": policy.loginOrigins = try strings()
            case "headers": policy.headers = try strings()
            case "maxage":
                guard let seconds = entry.intValue, seconds >= 0 else {
                    throw ConfigError(message: "CORS \"maxAge\" must be a number of seconds")
                }
                policy.maxAge = Int(seconds)
            case "admin":
                guard let enabled = entry.boolValue else { throw ConfigError(message: "CORS \"admin\" must be true or false") }
                policy.onAdminPort = enabled
            default:
                throw ConfigError(message: "unknown key \"\(key)\" in \"CORS\" (use origin, loginorigin, headers, maxAge, admin)")
            }
        }
        return policy
    }

    private static func address(_ value: JSON, key: String, defaultHost: String) throws -> ListenAddress {
        guard let text = value.stringValue, let address = ListenAddress(interface: text, defaultHost: defaultHost) else {
            throw ConfigError(message: "\"\(key)\" must look like \"host:port\" or \":port\"")
        }
        return address
    }

    /// `"conflicts": {"default": "winner", "types": {"task": "merge"}, "type_field": "type",
    /// "resolver": "function(conflicts, base) {…}"}`.
    static func parseConflicts(_ value: JSON, into database: inout NodeConfiguration.Database) throws {
        let name = database.name
        guard let settings = value.objectValue else {
            throw ConfigError(message: "database \"\(name)\": \"conflicts\" must be an object")
        }
        for key in settings.keys.sorted() where !["default", "types", "type_field", "resolver"].contains(key) {
            throw ConfigError(message: "database \"\(name)\": unknown key \"\(key)\" in \"conflicts\" (use default, types, type_field, resolver)")
        }
        func string(_ key: String) throws -> String? {
            guard let entry = settings[key] else { return nil }
            guard let text = entry.stringValue, !text.isEmpty else {
                throw ConfigError(message: "database \"\(name)\": conflicts \"\(key)\" must be a non-empty string")
            }
            return text
        }
        var types: [String: String] = [:]
        if let entries = settings["types"] {
            guard let object = entries.objectValue else {
                throw ConfigError(message: "database \"\(name)\": conflicts \"types\" must be an object of policies by type")
            }
            for (type, policy) in object {
                guard let text = policy.stringValue else {
                    throw ConfigError(message: "database \"\(name)\": conflict policy of type \"\(type)\" must be a string")
                }
                types[type] = text
            }
        }
        do {
            database.conflicts = try ConflictPolicies(
                parsingDefault: try string("default") ?? ConflictPolicy.default.description, byType: types,
                typeField: try string("type_field") ?? "type")
        } catch let error as ConflictPolicyError {
            throw ConfigError(message: "database \"\(name)\": \(error.description)")
        }
        database.conflictResolver = try string("resolver")
        let usesScript = database.conflicts.defaultPolicy == .js || database.conflicts.byType.values.contains(.js)
        if usesScript && database.conflictResolver == nil {
            throw ConfigError(message: "database \"\(name)\": the \"js\" conflict policy needs a \"resolver\" function in \"conflicts\"")
        }
    }

    /// Keys that start with `//` are comments (JSON has none): the packaged config explains
    /// itself with them. They are ignored without a warning at the top level and in a database.
    static func isComment(_ key: String) -> Bool { key.hasPrefix("//") }

    private static func database(name: String, _ value: JSON, warnings: inout [String]) throws -> NodeConfiguration.Database {
        guard NodeConfiguration.isValidDatabaseName(name) else {
            throw ConfigError(message: "invalid database name \"\(name)\": use lowercase letters, digits and _$()+-, starting with a letter")
        }
        guard let object = value.objectValue else { throw ConfigError(message: "database \"\(name)\" must be an object") }
        var database = NodeConfiguration.Database(name: name)
        database.users = [:]
        for key in object.keys.sorted() where !databaseKeys.contains(key) && !isComment(key) {
            warnings.append("database \"\(name)\": key \"\(key)\" is not used by Shoal yet; ignoring it")
        }
        if let server = object["server"] {
            guard let text = server.stringValue else { throw ConfigError(message: "database \"\(name)\": \"server\" must be a string") }
            database.inMemory = text == "walrus:"
            if !text.hasPrefix("walrus:") {
                warnings.append("database \"\(name)\": server \"\(text)\" is not used; Shoal stores the database in its data directory")
            }
        }
        if let limit = object["revs_limit"] {
            guard let value = limit.intValue, value >= 1 else { throw ConfigError(message: "database \"\(name)\": \"revs_limit\" must be a positive integer") }
            database.revsLimit = Int(value)
        }
        if let size = object["max_document_size"] {
            guard let value = size.intValue, value >= 1 else { throw ConfigError(message: "database \"\(name)\": \"max_document_size\" must be a positive integer") }
            database.maxDocumentSize = Int(value)
        }
        if let durability = object["durability"] {
            guard let text = durability.stringValue, let value = StoreConfiguration.Durability(rawValue: text) else {
                throw ConfigError(message: "database \"\(name)\": \"durability\" must be \"full\" or \"normal\"")
            }
            database.durability = value
        }
        if let encryption = object["encryption"] {
            database.encryption = try EncryptionSource.parse(encryption, context: "database \"\(name)\"")
        }
        if let mesh = object["mesh"] {
            guard let settings = mesh.objectValue else {
                throw ConfigError(message: "database \"\(name)\": \"mesh\" must be an object")
            }
            if let group = settings["group"] {
                guard let text = group.stringValue, !text.isEmpty else {
                    throw ConfigError(message: "database \"\(name)\": mesh \"group\" must be a non-empty string")
                }
                database.meshGroup = text
            }
            if let maxPeers = settings["max_peers"] {
                guard let value = maxPeers.intValue, value >= 1 else {
                    throw ConfigError(message: "database \"\(name)\": mesh \"max_peers\" must be a positive integer")
                }
                database.maxPeers = Int(value)
            }
            if let secret = settings["secret"] {
                guard let text = secret.stringValue, text.utf8.count >= 8 else {
                    throw ConfigError(message: "database \"\(name)\": mesh \"secret\" must be a string of at least 8 characters")
                }
                database.meshSecret = text
            }
            if let tls = settings["tls"] {
                guard let value = tls.boolValue else {
                    throw ConfigError(message: "database \"\(name)\": mesh \"tls\" must be true or false")
                }
                database.meshTLSSetting = value
            }
            if let enabled = settings["enabled"] {
                guard let value = enabled.boolValue else {
                    throw ConfigError(message: "database \"\(name)\": mesh \"enabled\" must be true or false")
                }
                database.meshEnabled = value
            }
        }
        try parsePrincipals(object, into: &database)
        if let conflicts = object["conflicts"] {
            try parseConflicts(conflicts, into: &database)
        }
        if let scopes = object["scopes"] {
            try parseScopes(scopes, into: &database, warnings: &warnings)
        }
        if let replications = object["replications"] {
            guard let entries = replications.objectValue else {
                throw ConfigError(message: "database \"\(name)\": \"replications\" must be an object of replications by ID")
            }
            for (id, entry) in entries {
                guard let definition = entry.objectValue else {
                    throw ConfigError(message: "database \"\(name)\": replication \"\(id)\" must be an object")
                }
                do {
                    _ = try ReplicationConfiguration(id: id, json: definition)
                } catch {
                    throw ConfigError(message: "database \"\(name)\": \(error.reason)")
                }
                database.replications[id] = definition
            }
        }
        return database
    }

    /// `"users"`, `"roles"` (objects by name, validated now so that a bad entry fails
    /// the start with its reason) and `"sync"` (compiled when the node starts).
    static func parsePrincipals(_ object: [String: JSON], into database: inout NodeConfiguration.Database) throws {
        let name = database.name
        for (key, kind) in [("users", "user"), ("roles", "role")] {
            guard let value = object[key] else { continue }
            guard let entries = value.objectValue else {
                throw ConfigError(message: "database \"\(name)\": \"\(key)\" must be an object of \(kind)s by name")
            }
            for (principal, definition) in entries {
                do {
                    if kind == "user" {
                        _ = try User(json: definition, name: principal, passwordIterations: 1)
                    } else {
                        _ = try Role(json: definition, name: principal)
                    }
                } catch {
                    throw ConfigError(message: "database \"\(name)\": \(kind) \"\(principal)\": \(error.reason)")
                }
            }
            if key == "users" { database.users = entries } else { database.roles = entries }
        }
        if let sync = object["sync"] {
            guard let source = sync.stringValue, !source.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw ConfigError(message: "database \"\(name)\": \"sync\" must be a JavaScript function")
            }
            database.sync = source
        }
    }

    /// Turns Sync Gateway's backquoted strings (which may span lines and contain
    /// quotes) into JSON strings. Backquotes inside JSON strings are left alone.
    static func convertBackquotes(_ text: String) throws -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        var inString = false
        var escaped = false
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            if inString {
                output.append(character)
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
                continue
            }
            if character == "\"" {
                inString = true
                output.append(character)
            } else if character == "`" {
                var content = ""
                var closed = false
                while let next = iterator.next() {
                    if next == "`" { closed = true; break }
                    content.append(next)
                }
                guard closed else { throw ConfigError(message: "config has an unterminated backquoted string") }
                output += JSON.string(content).canonicalString
            } else {
                output.append(character)
            }
        }
        return output
    }
}
