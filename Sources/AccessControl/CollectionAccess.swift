import DocumentModel
import DocumentStore

/// The channels an administrator gave a user or role in named collections, Sync
/// Gateway 3's `"collection_access": {scope: {collection: {"admin_channels": [...]}}}`.
/// The default collection's channels stay in the principal's own `admin_channels`.
public struct CollectionAccess: Sendable, Equatable {
    public var channels: [CollectionName: Set<String>] = [:]

    public init(channels: [CollectionName: Set<String>] = [:]) {
        self.channels = channels
    }

    /// The admin channels of `collection` (`admin_channels` itself is the default's).
    public func adminChannels(in collection: CollectionName) -> Set<String> {
        channels[collection] ?? []
    }

    /// The keys under which a principal's `seqs` keep, per collection, the collection's
    /// sequence from which each of these channels counts.
    var sequenceKeys: Set<String> {
        Set(channels.flatMap { name, set in set.map { Self.sequenceKey(name, $0) } })
    }

    static let sequenceKeyPrefix = "collection:"

    /// `collection:<scope>.<name>:<channel>`.
    static func sequenceKey(_ collection: CollectionName, _ channel: String) -> String {
        "\(sequenceKeyPrefix)\(collection):\(channel)"
    }

    /// The collection a sequence key names (nil: not a collection's key).
    static func collection(ofSequenceKey key: String) -> CollectionName? {
        guard key.hasPrefix(sequenceKeyPrefix) else { return nil }
        let rest = key.dropFirst(sequenceKeyPrefix.count)
        guard let colon = rest.firstIndex(of: ":") else { return nil }
        return CollectionName(String(rest[..<colon]))
    }

    /// The collection and channel a sequence key names (nil: not a collection's key).
    static func channel(ofSequenceKey key: String) -> (collection: CollectionName, channel: String)? {
        guard let collection = collection(ofSequenceKey: key) else { return nil }
        let prefix = sequenceKey(collection, "")
        guard key.hasPrefix(prefix) else { return nil }
        return (collection, String(key.dropFirst(prefix.count)))
    }

    /// Parses a `collection_access` object; entries present replace those named, the
    /// others stay (`merging` is the principal's current access).
    static func parse(_ value: JSON, merging current: CollectionAccess) throws(PrincipalError) -> CollectionAccess {
        guard let scopes = value.objectValue else {
            throw PrincipalError(reason: "Invalid collection_access: must be an object of scopes")
        }
        var result = current
        for (scope, collectionsValue) in scopes {
            guard let collections = collectionsValue.objectValue else {
                throw PrincipalError(reason: "Invalid collection_access: scope \"\(scope)\" must be an object of collections")
            }
            for (collection, entry) in collections {
                guard let name = CollectionName(scope: scope, name: collection) else {
                    throw PrincipalError(reason: "Invalid collection_access: bad collection name \"\(scope).\(collection)\"")
                }
                guard let object = entry.objectValue else {
                    throw PrincipalError(reason: "Invalid collection_access: \"\(name)\" must be an object")
                }
                for key in object.keys where !["admin_channels", "all_channels", "jwt_channels"].contains(key) {
                    throw PrincipalError(reason: "Invalid collection_access: unknown field \"\(key)\" in \"\(name)\"")
                }
                guard let channels = object["admin_channels"] else { continue }
                let set = try PrincipalValidation.stringSet(channels, field: "admin_channels")
                try PrincipalValidation.validateChannels(set, field: "admin_channels")
                result.channels[name] = set
            }
        }
        return result
    }

    /// The stored form (nil when there is none).
    init(stored json: JSON?) {
        guard let scopes = json?.objectValue else { return }
        for (scope, collections) in scopes {
            for (collection, entry) in collections.objectValue ?? [:] {
                guard let name = CollectionName(scope: scope, name: collection) else { continue }
                channels[name] = Set(entry["admin_channels"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            }
        }
    }

    /// `{scope: {collection: {"admin_channels": [...]}}}`; nil when empty.
    func json() -> JSON? {
        guard !channels.isEmpty else { return nil }
        var scopes: [String: [String: JSON]] = [:]
        for (name, set) in channels {
            scopes[name.scope, default: [:]][name.name] = .object(["admin_channels": PrincipalValidation.sortedArray(set)])
        }
        return .object(scopes.mapValues { .object($0) })
    }
}
