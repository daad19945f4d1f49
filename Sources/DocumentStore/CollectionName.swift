/// A collection of a database, named by its scope and its name as in Sync Gateway 3 and
/// Couchbase Lite 3 (`_default._default` is the default collection, the only one of a
/// database configured without `scopes`).
public struct CollectionName: Hashable, Sendable, Comparable, CustomStringConvertible {
    public static let defaultName = "_default"
    /// The default collection of the default scope.
    public static let `default` = CollectionName(unchecked: defaultName, defaultName)

    public let scope: String
    public let name: String

    /// A collection name, or nil when either part breaks Sync Gateway's rule: 1–251
    /// characters among letters, digits, `_`, `-` and `%`, not starting with `_` or `%`
    /// (except `_default` itself, which as a collection exists only in the `_default` scope).
    public init?(scope: String, name: String) {
        guard Self.isValid(scope), Self.isValid(name), name != Self.defaultName || scope == Self.defaultName else { return nil }
        self.scope = scope
        self.name = name
    }

    /// `scope.name`, or `name` alone (the default scope), as Couchbase Lite names a
    /// collection in `getCollections`.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        switch parts.count {
        case 1: self.init(scope: Self.defaultName, name: parts[0])
        case 2: self.init(scope: parts[0], name: parts[1])
        default: return nil
        }
    }

    private init(unchecked scope: String, _ name: String) {
        self.scope = scope
        self.name = name
    }

    public var isDefault: Bool { self == .default }

    /// The keyspace that names this collection of `database` in REST paths and in the
    /// node's registry: the database's name for the default collection, else
    /// `database.scope.name` (database names contain no dots).
    public func keyspace(in database: String) -> String {
        isDefault ? database : "\(database).\(scope).\(name)"
    }

    /// Reads a keyspace (`db`, `db.collection` in the default scope, `db.scope.collection`)
    /// into its database and collection; nil when a part is empty or not a valid name.
    public static func parseKeyspace(_ keyspace: String) -> (database: String, collection: CollectionName)? {
        let parts = keyspace.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let database = parts.first, !database.isEmpty else { return nil }
        switch parts.count {
        case 1: return (database, .default)
        case 2: return CollectionName(scope: defaultName, name: parts[1]).map { (database, $0) }
        case 3: return CollectionName(scope: parts[1], name: parts[2]).map { (database, $0) }
        default: return nil
        }
    }

    /// `scope.name`.
    public var description: String { "\(scope).\(name)" }

    public static func < (lhs: CollectionName, rhs: CollectionName) -> Bool {
        (lhs.scope, lhs.name) < (rhs.scope, rhs.name)
    }

    static func isValid(_ part: String) -> Bool {
        if part == defaultName { return true }
        guard let first = part.unicodeScalars.first, first != "_", first != "%", part.utf8.count <= 251 else { return false }
        return part.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "_-%".unicodeScalars.contains(scalar))
        }
    }
}
