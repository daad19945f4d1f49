import BLIP
import DocumentModel
import DocumentStore
import Foundation

/// The active side of named collections, as Couchbase Lite 3's replicator does it:
/// one `getCollections` naming every collection (with each one's checkpoint client
/// ID), then one session per collection, its messages carrying the collection's
/// index in that list (`collection`).
extension Replicator {
    func replicateCollections(over connection: BLIPConnection) async throws {
        let router = CollectionRouter(connection: connection)
        let clients = collections.map { checkpointClient(store: $0.store) }
        let request = BLIPMessage(
            profile: ReplicationMessages.getCollections,
            body: JSON.object([
                "checkpoint_ids": .array(clients.map { .string($0) }),
                "collections": .array(collections.map { .string($0.name.description) }),
            ]).canonicalBytes())
        let reply: BLIPMessage
        let outcome: Result<BLIPMessage, BLIPError>
        do {
            outcome = .success(try await connection.sendRequest(request))
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .success(let message):
            reply = message
        case .failure(let error):
            // A peer without named collections (an older node): the default collection alone.
            guard error.domain == "BLIP", error.code == BLIPError.Code.notFound, sharedCollectionsOnly,
                  let index = collections.firstIndex(where: { $0.name.isDefault })
            else { throw error }
            let session = ReplicationSession(
                store: collections[index].store, connection: connection, progress: progress,
                access: peerAccess(connection), logger: logger)
            defer { session.close() }
            progress.setState(.running)
            try await replicate(session: session, client: clients[index], remote: .fetch) { session.isCaughtUp }
            return
        }
        guard let entries = (try? JSON.parse(reply.body))?.arrayValue, entries.count == collections.count else {
            throw BLIPError(domain: "HTTP", code: 502, message: "Invalid getCollections reply: \(reply.bodyString.prefix(200))")
        }
        let access = peerAccess(connection)
        var targets: [(session: ReplicationSession, client: String, remote: RemoteCheckpoint)] = []
        for (index, entry) in entries.enumerated() {
            guard var body = entry.objectValue else {
                if sharedCollectionsOnly { continue }
                throw DialError("Collection '\(collections[index].name)' is not found on the remote server", permanent: true)
            }
            let rev = body.removeValue(forKey: "rev")?.stringValue
            let session = ReplicationSession(
                store: collections[index].store, connection: connection, progress: progress, access: access, logger: logger,
                link: CollectionLink(router: router, index: index))
            targets.append((session, clients[index], .given(rev.map { ($0, body) })))
        }
        let sessions = targets.map(\.session)
        defer { for session in sessions { session.close() } }
        progress.setState(.running)
        let caughtUp: @Sendable () -> Bool = { sessions.allSatisfy(\.isCaughtUp) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for target in targets {
                group.addTask {
                    try await self.replicate(session: target.session, client: target.client, remote: target.remote, caughtUp: caughtUp)
                }
            }
            try await group.waitForAll()
        }
    }
}
