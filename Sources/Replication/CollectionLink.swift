import BLIP

/// One collection's view of a BLIP connection: what a replication session sends gets
/// the `collection` property (the collection's index in `getCollections`), and what it
/// registers receives only the requests of that collection (through a
/// `CollectionRouter`). Without an index (the default collection of a connection that
/// never used `getCollections`) it is the connection itself.
public final class CollectionLink: Sendable {
    public let connection: BLIPConnection
    /// The collection's index in the `getCollections` list (nil: no `collection` property).
    public let index: Int?
    let router: CollectionRouter?

    /// The connection itself (no collection property, handlers registered directly).
    public init(connection: BLIPConnection) {
        self.connection = connection
        index = nil
        router = nil
    }

    /// Collection `index` (nil: requests without the property) of `router`'s connection.
    public init(router: CollectionRouter, index: Int?) {
        connection = router.connection
        self.index = index
        self.router = router
    }

    private func tagged(_ message: BLIPMessage) -> BLIPMessage {
        guard let index else { return message }
        var message = message
        message[CollectionRouter.property] = String(index)
        return message
    }

    func setHandler(
        for profile: String, serial: Bool = false, _ handler: @escaping @Sendable (BLIPMessage) async throws -> BLIPMessage
    ) {
        if let router {
            router.setHandler(for: profile, index: index, serial: serial, handler)
        } else {
            connection.setHandler(for: profile, serial: serial, handler)
        }
    }

    func setImmediateHandler(for profile: String, _ handler: @escaping BLIPConnection.ImmediateHandler) {
        if let router {
            router.setImmediateHandler(for: profile, index: index, handler)
        } else {
            connection.setImmediateHandler(for: profile, handler)
        }
    }

    func sendRequest(_ message: BLIPMessage) async throws(BLIPError) -> BLIPMessage {
        try await connection.sendRequest(tagged(message))
    }

    func sendNoReply(_ message: BLIPMessage) async throws(BLIPError) {
        try await connection.sendNoReply(tagged(message))
    }

    func sendRequests(_ messages: [BLIPMessage], onReply: @escaping @Sendable (Int, Result<BLIPMessage, BLIPError>) -> Void) {
        connection.sendRequests(index == nil ? messages : messages.map(tagged), onReply: onReply)
    }

    func respond(_ replies: [(responder: BLIPResponder, result: Result<BLIPMessage, BLIPError>)]) {
        connection.respond(replies)
    }

    func close(error: BLIPError? = nil) async { await connection.close(error: error) }
    func onClose(_ action: @escaping @Sendable () -> Void) { connection.onClose(action) }
    var isClosed: Bool { connection.isClosed }
    var statistics: BLIPStatistics { connection.statistics }
}
