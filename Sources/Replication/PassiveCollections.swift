import BLIP
import DocumentModel
import DocumentStore
import Logging
import Synchronization

/// The passive side of a replication connection that may name collections: a session
/// for the default collection, ready from the first frame (requests without a
/// `collection` property), and Couchbase Lite 3's `getCollections`, which opens one
/// session per collection it names, addressed afterwards by its index in the list.
///
/// `getCollections` request body: `{"collections": ["scope.name" | "name", …],
/// "checkpoint_ids": [client ID per collection]}`. Reply body: an array with, per
/// collection, the peer checkpoint stored under that client ID in that collection (its
/// JSON with the `rev` inside), `{}` when there is none, or `null` when this database
/// has no such collection (Couchbase Lite then stops with "not found on the remote").
public final class PassiveCollections: Sendable {
    /// What serves one collection for this peer: its store and the peer's access there
    /// (a user's channels are per collection); nil when the database has no such collection.
    public typealias Resolver = @Sendable (CollectionName) async -> (store: DocumentStore, access: PeerAccess)?

    /// Most collections one `getCollections` may name.
    static let maxCollections = 1000

    public let defaultSession: ReplicationSession
    let router: CollectionRouter
    let resolver: Resolver
    let logger: Logger
    private let sessions = Mutex<[ReplicationSession]>([])
    private let answered = Mutex(false)

    /// Registers every handler on `connection` (call before it reads its first frame).
    public init(
        store: DocumentStore, connection: BLIPConnection, access: PeerAccess, logger: Logger = Logger(label: "Sync"),
        resolver: @escaping Resolver
    ) {
        let router = CollectionRouter(connection: connection)
        self.router = router
        self.resolver = resolver
        self.logger = logger
        defaultSession = ReplicationSession(
            store: store, connection: connection, access: access, logger: logger, link: CollectionLink(router: router, index: nil))
        connection.setHandler(for: ReplicationMessages.getCollections) { [self] in try await handleGetCollections($0) }
    }

    /// Every session of the connection, the default one first.
    public var allSessions: [ReplicationSession] { [defaultSession] + sessions.withLock { $0 } }

    /// Stops serving (call when the connection has ended).
    public func close() {
        for session in allSessions { session.close() }
    }

    static func invalid(_ reason: String) -> BLIPError {
        BLIPError(domain: "BLIP", code: 400, message: "Invalid getCollections message: \(reason)")
    }

    func handleGetCollections(_ message: BLIPMessage) async throws -> BLIPMessage {
        guard answered.withLock({ done in defer { done = true }; return !done }) else {
            throw Self.invalid("not the first message")
        }
        guard let root = (try? JSON.parse(message.body))?.objectValue else { throw Self.invalid("no root") }
        guard let ids = root["checkpoint_ids"]?.arrayValue, !ids.isEmpty else { throw Self.invalid("no checkpoint_ids") }
        guard let paths = root["collections"]?.arrayValue, !paths.isEmpty else { throw Self.invalid("no collections") }
        guard ids.count == paths.count else { throw Self.invalid("mismatched checkpoint_ids and collections") }
        guard paths.count <= Self.maxCollections else { throw Self.invalid("more than \(Self.maxCollections) collections") }
        var names: [CollectionName?] = []
        var clients: [String] = []
        for (path, id) in zip(paths, ids) {
            guard let text = path.stringValue, !text.isEmpty else { throw Self.invalid("empty collection path") }
            guard let client = id.stringValue, !client.isEmpty else { throw Self.invalid("checkpoint_ids must be strings") }
            let name = CollectionName(text)
            if let name, names.contains(name) { throw Self.invalid("duplicate collection path") }
            names.append(name)
            clients.append(client)
        }
        var entries: [JSON] = []
        var opened: [ReplicationSession] = []
        for (index, name) in names.enumerated() {
            guard let name, let (store, access) = await resolver(name) else {
                logger.info("getCollections: no collection \(paths[index].stringValue ?? "?") here")
                entries.append(.null)
                continue
            }
            opened.append(ReplicationSession(
                store: store, connection: router.connection, progress: defaultSession.progress, access: access, logger: logger,
                link: CollectionLink(router: router, index: index)))
            if let checkpoint = try await store.localDocument(ReplicationSession.checkpointID(clients[index])) {
                var body = checkpoint.body
                body["rev"] = .string(checkpoint.rev)
                entries.append(.object(body))
            } else {
                entries.append(.object([:]))
            }
        }
        sessions.withLock { $0.append(contentsOf: opened) }
        return BLIPMessage(body: JSON.array(entries).canonicalBytes())
    }
}
