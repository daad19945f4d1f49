import BLIP
import DocumentStore
import Foundation

/// One replication as a user declares it (Sync Gateway's `_replication` shape):
/// where the peer is, which way documents flow, once or continuously, and filters.
public struct ReplicationConfiguration: Sendable, Equatable {
    public enum Direction: String, Sendable, Equatable, CaseIterable {
        case push, pull, pushAndPull
        public var pushes: Bool { self != .pull }
        public var pulls: Bool { self != .push }
    }

    public var id: String
    /// The peer's BLIP endpoint, `ws://host:port/db/_blipsync` (normalized).
    public var remote: String
    public var direction: Direction
    public var continuous: Bool
    /// `sync_gateway/bychannel` filter: only documents in these channels.
    public var channels: [String]?
    /// Only these documents.
    public var docIDs: [String]?
    public var username: String?
    public var password: String?
    /// WebSocket heartbeat interval; a peer silent for about three intervals is gone.
    public var heartbeat: Duration
    /// Changes per `changes` message.
    public var batchSize: Int
    /// Longest wait between reconnection attempts (before jitter).
    public var maxBackoff: Duration
    /// For `wss://`: the server certificate to accept instead of checking the chain
    /// against the system's trust roots (PEM text, or the path of a PEM file), like
    /// Couchbase Lite's pinned server certificate.
    public var pinnedCertificate: String?
    /// Purge local copies of documents the remote says this replication lost access to
    /// (Sync Gateway's `purge_on_removal`; off by default, as there).
    public var purgeOnRemoval = false
    /// The collections replicated (`"collections"`: `["lists", "app.tasks"]`; the
    /// default collection is `_default`); nil: the default collection only, unless
    /// `allCollections`.
    public var collections: [CollectionName]?
    /// Every collection of the local database (Sync Gateway's `"collections_enabled": true`
    /// without `"collections"`).
    public var allCollections = false
    /// Retry even the failures that otherwise end the replication with an error
    /// (`Replicator.isPermanent`: refusals 401/403/404, a pinned certificate that does
    /// not match, a missing collection): a mesh link, whose refusal may go away on the
    /// other side (its clock set right, its mesh secret or database configured), keeps
    /// redialing with the backoff.
    public var retryRefusals = false

    /// The newest protocol version the dial offers (`"versioning"`): `rev-trees` offers
    /// `BLIP_3+CBMobile_3` (then 2: revision IDs and trees, Couchbase Lite 3, Sync Gateway
    /// 3 and 4, Shoal); `version-vectors` offers `BLIP_3+CBMobile_4` first (versions when
    /// the peer speaks it, as Couchbase Lite 4 does; revision trees otherwise).
    public var versioning = ProtocolVersion.default

    /// Dial as a Couchbase Lite client would (`"client": true`, Shoal's own key): without
    /// the header that names Shoal's replicator, so that a Shoal node or Sync Gateway
    /// serves it as a client (no-conflicts mode: branches refused, winners offered). The
    /// chaos run's client writers use it to play Couchbase Lite 3 and 4.
    public var asClient = false

    public init(
        id: String, remote: String, direction: Direction = .pushAndPull, continuous: Bool = false,
        channels: [String]? = nil, docIDs: [String]? = nil, username: String? = nil, password: String? = nil,
        heartbeat: Duration = .seconds(2), batchSize: Int = 200, maxBackoff: Duration = .seconds(5)
    ) {
        self.id = id
        self.remote = Self.normalize(remote: remote) ?? remote
        self.direction = direction
        self.continuous = continuous
        self.channels = channels
        self.docIDs = docIDs
        self.username = username
        self.password = password
        self.heartbeat = heartbeat
        self.batchSize = batchSize
        self.maxBackoff = maxBackoff
    }

    /// `http(s)://host:port/db[/]` or `ws(s)://…` → `ws(s)://host:port/db/_blipsync`;
    /// nil when it is not such a URL.
    public static func normalize(remote: String) -> String? {
        guard var components = URLComponents(string: remote), let scheme = components.scheme?.lowercased(),
              components.host?.isEmpty == false
        else { return nil }
        switch scheme {
        case "http", "ws": components.scheme = "ws"
        case "https", "wss": components.scheme = "wss"
        default: return nil
        }
        var path = components.path
        while path.hasSuffix("/") { path.removeLast() }
        let segments = path.split(separator: "/")
        guard !segments.isEmpty else { return nil }
        if segments.last != "_blipsync" { path += "/_blipsync" }
        components.path = path
        return components.string
    }

    /// The plain HTTP(S) URL of a peer's WebSocket URL (`ws` → `http`, `wss` →
    /// `https`), with `path` when given; nil when malformed.
    public static func httpURL(forRemote remote: String, path: String? = nil) -> URL? {
        guard var components = URLComponents(string: remote) else { return nil }
        components.scheme = components.scheme == "wss" || components.scheme == "https" ? "https" : "http"
        if let path { components.path = path }
        return components.url
    }

    /// The remote URL without any password in it (what origins and logs may show).
    public var redactedRemote: String {
        guard var components = URLComponents(string: remote), components.password != nil else { return remote }
        components.password = nil
        return components.string ?? remote
    }

    /// The database name in the remote URL.
    public var remoteDatabase: String? {
        URLComponents(string: remote)?.path.split(separator: "/").dropLast().last.map(String.init)
    }
}
