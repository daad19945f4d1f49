import AccessControl
import DocumentModel
import DocumentStore
import Foundation
import RESTServer

/// Everything a node needs to start: listeners, data directory, databases, log keys.
/// Built from a config file (`ConfigLoader`) and command-line flags.
public struct NodeConfiguration: Sendable, Equatable {
    /// One database served by the node.
    public struct Database: Sendable, Equatable {
        public var name: String
        /// True for `"server": "walrus:"`: in memory, gone when the node stops.
        public var inMemory: Bool
        public var revsLimit: Int
        public var maxDocumentSize: Int
        public var durability: StoreConfiguration.Durability
        /// Replications started with the node, by ID, in Sync Gateway's shape
        /// (validated when the config is loaded).
        public var replications: [String: [String: JSON]] = [:]
        /// Mesh group (nil: the database name).
        public var meshGroup: String?
        /// Largest number of mesh connections.
        public var maxPeers = 8
        /// Take part in the mesh (discovery and static peers).
        public var meshEnabled = true
        /// How conflicts are resolved (`"conflicts"`: default policy, per-type
        /// policies, the type property).
        public var conflicts = ConflictPolicies()
        /// The `js` policy's function, `function(conflicts, base) {…}`.
        public var conflictResolver: String?
        /// Users and roles created at start (`"users"`, `"roles"`, Sync Gateway's shape).
        /// A database built in code (the embedded defaults, `--db`) has GUEST enabled with
        /// the `*` channel, as in Sync Gateway's development configs; one read from a config
        /// file has exactly the users the file names (GUEST disabled unless configured).
        public var users: [String: JSON] = [User.guestName: Self.openGuest]
        public var roles: [String: JSON] = [:]
        /// The sync function (`"sync"`); nil: Sync Gateway's default, which routes each
        /// document to the channels in its `channels` property.
        public var sync: String?
        /// The shared secret mesh peers must prove (`"mesh": {"secret": …}`); nil: any
        /// node that says it is a mesh peer is accepted (development).
        public var meshSecret: String?
        /// Mesh links over TLS (`"mesh": {"tls": …}`); nil: on when there is a secret.
        public var meshTLSSetting: Bool?
        /// Where the key of an encrypted database comes from (`"encryption"`); nil: plain.
        public var encryption: EncryptionSource?
        /// Named collections (`"scopes"`), in name order; empty: only the default
        /// collection, as before scopes existed.
        public var collections: [CollectionSettings] = []

        /// Whether this database's mesh links use TLS (with each node's own certificate,
        /// authenticated by the mesh secret). Without a secret TLS would authenticate
        /// nobody, so it is off.
        public var meshTLS: Bool { meshSecret != nil && (meshTLSSetting ?? true) }

        /// GUEST enabled, reading every channel.
        public static let openGuest: JSON = ["disabled": false, "admin_channels": ["*"]]

        /// The mesh group in effect.
        public var group: String { meshGroup ?? name }

        public init(
            name: String, inMemory: Bool = false, revsLimit: Int = 1000, maxDocumentSize: Int = 20 * 1024 * 1024,
            durability: StoreConfiguration.Durability = .full
        ) {
            self.name = name
            self.inMemory = inMemory
            self.revsLimit = revsLimit
            self.maxDocumentSize = maxDocumentSize
            self.durability = durability
        }
    }

    public var publicAddress = ListenAddress(host: "0.0.0.0", port: 4984)
    public var adminAddress = ListenAddress(host: "127.0.0.1", port: 4985)
    public var dataDirectory = "./shoal-data"
    public var databases: [Database] = [Database(name: "db")]
    /// Sync Gateway style log keys (`HTTP`, `CRUD`, `Changes`, … or `*`).
    public var logKeys: Set<String> = ["HTTP"]
    /// PBKDF2 rounds for new password hashes (lower only in tests).
    public var passwordIterations = PasswordHash.defaultIterations
    /// Largest request body for JSON endpoints.
    public var maxRequestBytes = 64 * 1024 * 1024
    /// How long an HTTP connection may take to send its first request head, and sit
    /// idle between requests, before it is closed (slowloris clients); nil: forever.
    public var httpIdleTimeout: Duration? = .seconds(30)
    /// How long a view's JavaScript (`map`, `reduce`) may run on one document or group
    /// before the view fails with CouchDB's `os_process_error` (as CouchDB's
    /// `os_process_timeout`, here 2 s by default; a test raises it to measure around it).
    public var viewTimeout: Duration = .seconds(2)
    /// WebSocket heartbeat of replication connections (a silent peer is gone after
    /// about three intervals).
    public var heartbeat: Duration = .seconds(2)
    /// Static mesh peers, `ws://host:port/db` (the database in the URL picks which
    /// of our databases replicates with it).
    public var peers: [String] = []
    /// Find peers over DNS-SD through the host's avahi-daemon.
    public var discovery = true
    /// TLS certificate (PEM, leaf first) and private key of the public port (Sync
    /// Gateway's `SSLCert` / `SSLKey`): with them the port serves HTTPS and `wss://` only.
    public var sslCertificatePath: String?
    public var sslKeyPath: String?
    /// Cross-origin access for browser apps (Sync Gateway's top-level `"CORS"`); nil:
    /// no CORS headers and no preflight answers (the default).
    public var cors: CORSPolicy?
    /// The nemesis (`"nemesis"`): off unless enabled (docs/operations.md "The nemesis").
    public var nemesis = NemesisSettings()

    public init() {}

    /// The store configuration of one database.
    public func storeConfiguration(for database: Database) -> StoreConfiguration {
        StoreConfiguration(
            name: database.name,
            location: database.inMemory ? .memory : .directory(dataDirectory),
            revsLimit: database.revsLimit,
            maxDocumentSize: database.maxDocumentSize,
            durability: database.durability)
    }

    /// Database names must be lowercase letters, digits and `_$()+-`, starting with a
    /// letter (CouchDB's rule, which Sync Gateway follows).
    public static func isValidDatabaseName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first), name.utf8.count <= 238 else {
            return false
        }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789_$()+-".unicodeScalars)
        return name.unicodeScalars.allSatisfy { allowed.contains($0) }
    }
}
