import BLIP
import Synchronization

/// Shares one BLIP connection among the replication sessions of several collections
/// (Couchbase Lite 3's `getCollections`): it owns the connection's handler of each
/// replication profile and hands every request to the session of the collection its
/// `collection` property names (an index into the `getCollections` list; absent: the
/// default collection's session, as for a client that never sent `getCollections`).
/// A request for a collection index nobody registered gets ERR `HTTP`/400.
public final class CollectionRouter: Sendable {
    /// The property naming a request's collection.
    public static let property = "collection"

    private enum Handler: Sendable {
        case async(@Sendable (BLIPMessage) async throws -> BLIPMessage)
        case immediate(BLIPConnection.ImmediateHandler)
    }

    public let connection: BLIPConnection
    /// Handlers by profile, then by collection index (nil: no `collection` property).
    private let handlers = Mutex<[String: [Int?: Handler]]>([:])

    public init(connection: BLIPConnection) {
        self.connection = connection
    }

    /// Registers `handler` for `profile` requests of collection `index`.
    func setHandler(
        for profile: String, index: Int?, serial: Bool,
        _ handler: @escaping @Sendable (BLIPMessage) async throws -> BLIPMessage
    ) {
        let first = handlers.withLock { table in
            defer { table[profile, default: [:]][index] = .async(handler) }
            return table[profile] == nil
        }
        guard first else { return }
        connection.setHandler(for: profile, serial: serial) { [self] message in
            switch try route(message) {
            case .async(let handler): return try await handler(message)
            case .immediate: throw ReplicationMessages.error(500, "\(profile) has no request handler")
            }
        }
    }

    /// Registers an immediate handler for `profile` requests of collection `index`.
    func setImmediateHandler(for profile: String, index: Int?, _ handler: @escaping BLIPConnection.ImmediateHandler) {
        let first = handlers.withLock { table in
            defer { table[profile, default: [:]][index] = .immediate(handler) }
            return table[profile] == nil
        }
        guard first else { return }
        connection.setImmediateHandler(for: profile) { [self] message, responder in
            do {
                switch try route(message) {
                case .immediate(let handler): handler(message, responder)
                case .async: responder.fail(ReplicationMessages.error(500, "\(profile) has no immediate handler"))
                }
            } catch let error as BLIPError {
                responder.fail(error)
            } catch {
                responder.fail(ReplicationMessages.error(500, "\(error)"))
            }
        }
    }

    /// The handler of the request's collection.
    private func route(_ message: BLIPMessage) throws -> Handler {
        let profile = message.profile ?? ""
        var index: Int?
        if let text = message[Self.property] {
            guard let value = Int(text), value >= 0 else {
                throw ReplicationMessages.error(400, "Invalid collection index \(text)")
            }
            index = value
        }
        guard let handler = handlers.withLock({ $0[profile]?[index] }) else {
            if let index { throw ReplicationMessages.error(400, "Invalid collection index \(index): no such collection in getCollections") }
            throw ReplicationMessages.error(400, "\(profile) needs a collection property: this connection replicates named collections")
        }
        return handler
    }
}
