import BLIP
import DocumentStore
import DocumentModel
import Foundation

/// A replication definition that cannot be used, with the reason.
public struct ReplicationConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}

extension ReplicationConfiguration {
    /// Parses Sync Gateway's replication shape: `remote`, `direction`
    /// (`push`/`pull`/`pushAndPull`), `continuous`, `filter` (`sync_gateway/bychannel`)
    /// with `query_params.channels`, `doc_ids`, `remote_username`, `remote_password`,
    /// `purge_on_removal` (purge local copies of documents the remote says we lost access
    /// to), plus Shoal's `heartbeat` (seconds), `batch_size` and `pinned_cert` (for
    /// `wss://`: the server's certificate, PEM text or a file path), `collections`
    /// (`["lists", "app.tasks"]`), Sync Gateway's `collections_enabled` and `versioning`
    /// (`rev-trees`, the default, or `version-vectors`: speak `BLIP_3+CBMobile_4` when the
    /// peer does, as Couchbase Lite 4).
    public init(id: String, json: [String: JSON]) throws(ReplicationConfigurationError) {
        guard !id.isEmpty else { throw .init(reason: "replication ID must not be empty") }
        guard let remoteText = json["remote"]?.stringValue else {
            throw .init(reason: "replication \(id): \"remote\" (ws://host:port/db) is required")
        }
        guard let remote = Self.normalize(remote: remoteText) else {
            throw .init(reason: "replication \(id): \"remote\" must be a ws://, wss://, http:// or https:// URL naming a database")
        }
        var direction = Direction.pushAndPull
        if let value = json["direction"] {
            guard let text = value.stringValue, let parsed = Direction(rawValue: text) else {
                throw .init(reason: "replication \(id): \"direction\" must be push, pull or pushAndPull")
            }
            direction = parsed
        }
        let continuous = try Self.bool(json["continuous"], "continuous", id) ?? false
        var channels: [String]?
        if let filter = json["filter"] {
            guard filter.stringValue == "sync_gateway/bychannel" else {
                throw .init(reason: "replication \(id): the only filter is sync_gateway/bychannel")
            }
            channels = try Self.strings(json["query_params"]?["channels"], "query_params.channels", id) ?? []
        }
        let docIDs = try Self.strings(json["doc_ids"], "doc_ids", id)
        self.init(
            id: id, remote: remote, direction: direction, continuous: continuous, channels: channels, docIDs: docIDs,
            username: json["remote_username"]?.stringValue, password: json["remote_password"]?.stringValue)
        purgeOnRemoval = try Self.bool(json["purge_on_removal"], "purge_on_removal", id) ?? false
        if let heartbeat = json["heartbeat"] {
            guard let seconds = heartbeat.doubleValue, seconds > 0, seconds * 1000 < Double(Int.max) else {
                throw .init(reason: "replication \(id): \"heartbeat\" must be a positive number of seconds")
            }
            self.heartbeat = .milliseconds(Int(seconds * 1000))
        }
        if let pinned = json["pinned_cert"] {
            guard let text = pinned.stringValue, !text.isEmpty else {
                throw .init(reason: "replication \(id): \"pinned_cert\" must be PEM text or the path of a PEM file")
            }
            pinnedCertificate = text
        }
        if let names = try Self.strings(json["collections"], "collections", id) {
            var parsed: [CollectionName] = []
            for name in names {
                guard let collection = CollectionName(name), !parsed.contains(collection) else {
                    throw .init(reason: "replication \(id): \"collections\" has an invalid or repeated collection \"\(name)\"")
                }
                parsed.append(collection)
            }
            guard !parsed.isEmpty else { throw .init(reason: "replication \(id): \"collections\" must name at least one collection") }
            collections = parsed
        }
        allCollections = try Self.bool(json["collections_enabled"], "collections_enabled", id) ?? false
        if let value = json["versioning"] {
            guard let text = value.stringValue, let parsed = ProtocolVersion(versioning: text) else {
                throw .init(reason: "replication \(id): \"versioning\" must be rev-trees or version-vectors")
            }
            versioning = parsed
        }
        asClient = try Self.bool(json["client"], "client", id) ?? false
        if let batch = json["batch_size"] {
            guard let size = batch.intValue, size > 0, size <= 1000 else {
                throw .init(reason: "replication \(id): \"batch_size\" must be 1…1000")
            }
            batchSize = Int(size)
        }
    }

    private static func bool(_ value: JSON?, _ key: String, _ id: String) throws(ReplicationConfigurationError) -> Bool? {
        guard let value else { return nil }
        guard let bool = value.boolValue else { throw .init(reason: "replication \(id): \"\(key)\" must be true or false") }
        return bool
    }

    private static func strings(_ value: JSON?, _ key: String, _ id: String) throws(ReplicationConfigurationError) -> [String]? {
        guard let value else { return nil }
        guard let array = value.arrayValue else { throw .init(reason: "replication \(id): \"\(key)\" must be an array of strings") }
        var result: [String] = []
        for item in array {
            guard let string = item.stringValue else { throw .init(reason: "replication \(id): \"\(key)\" must be an array of strings") }
            result.append(string)
        }
        return result
    }

    /// The definition as the admin API shows it (never the password).
    public var json: JSON {
        var object: [String: JSON] = [
            "replication_id": .string(id),
            "remote": .string(remote),
            "direction": .string(direction.rawValue),
            "continuous": .bool(continuous),
        ]
        if let channels {
            object["filter"] = "sync_gateway/bychannel"
            object["query_params"] = ["channels": .array(channels.map { .string($0) })]
        }
        if let docIDs { object["doc_ids"] = .array(docIDs.map { .string($0) }) }
        if let username { object["remote_username"] = .string(username) }
        if let pinnedCertificate { object["pinned_cert"] = .string(pinnedCertificate) }
        if purgeOnRemoval { object["purge_on_removal"] = true }
        if let collections { object["collections"] = .array(collections.map { .string($0.description) }) }
        if allCollections { object["collections_enabled"] = true }
        if versioning != .default { object["versioning"] = .string(versioning.subChangesVersioning) }
        if asClient { object["client"] = true }
        return .object(object)
    }
}

extension ReplicationStatus {
    /// Sync Gateway's `_replicationStatus` fields, and `started_on` (Unix seconds, as
    /// CouchDB's `_active_tasks` gives it).
    public func json(id: String) -> JSON {
        var object: [String: JSON] = [
            "replication_id": .string(id),
            "status": .string(state.rawValue),
            "docs_checked_push": .int(Int64(docsCheckedPush)),
            "docs_pushed": .int(Int64(docsPushed)),
            "docs_failed_push": .int(Int64(docsFailedPush)),
            "docs_checked_pull": .int(Int64(docsCheckedPull)),
            "docs_pulled": .int(Int64(docsPulled)),
            "docs_purged": .int(Int64(docsPurged)),
            "docs_failed_pull": .int(Int64(docsFailedPull)),
            "started_on": .int(Int64(startedAt.timeIntervalSince1970)),
        ]
        if let lastError { object["error_message"] = .string(lastError) }
        if let subprotocol { object["subprotocol"] = .string(subprotocol) }
        return .object(object)
    }
}
