import BLIP
import DocumentModel
import DocumentStore
import Foundation

extension ReplicationSession {
    /// A replication checkpoint: the last local sequence pushed and the last peer
    /// sequence pulled, saved on both sides under the same client ID.
    struct Checkpoint: Equatable {
        var local: UInt64 = 0
        var remote: JSON?

        var json: JSON {
            var object: [String: JSON] = ["local": .int(Int64(local))]
            if let remote { object["remote"] = remote }
            return .object(object)
        }

        init(local: UInt64 = 0, remote: JSON? = nil) {
            self.local = local
            self.remote = remote
        }

        init(_ json: [String: JSON]) {
            local = UInt64(max(0, json["local"]?.intValue ?? 0))
            remote = json["remote"]
        }
    }

    /// Reads the peer's copy of a checkpoint (nil when it has none).
    func remoteCheckpoint(client: String) async throws -> (rev: String, body: [String: JSON])? {
        let result: Result<BLIPMessage, BLIPError>
        do {
            result = .success(try await link.sendRequest(BLIPMessage(
                profile: ReplicationMessages.getCheckpoint, properties: [("client", client)])))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let reply):
            return (reply["rev"] ?? "", (try? JSON.parse(reply.body))?.objectValue ?? [:])
        case .failure(let error):
            if error.code == 404 { return nil }
            throw error
        }
    }

    /// Stores the checkpoint on the peer; returns its new revision.
    func saveRemoteCheckpoint(client: String, rev: String?, body: [String: JSON]) async throws -> String {
        var message = BLIPMessage(
            profile: ReplicationMessages.setCheckpoint, properties: [("client", client)],
            body: JSON.object(body).canonicalBytes())
        if let rev, !rev.isEmpty { message["rev"] = rev }
        let reply = try await link.sendRequest(message)
        return reply["rev"] ?? ""
    }

    /// How often a continuous replication saves its checkpoint when it moved. Each
    /// direction of each link wakes this often even when idle: at 500 ms (and the
    /// replicator's state check at 200 ms) an idle node of an 8-node mesh spent
    /// 4.6–5.5 ms of CPU per second, at 1 s 2.4–2.5 ms (alone: 2 ms).
    static let checkpointInterval = Duration.seconds(1)

    /// Pushes local changes after `since`; calls `onCheckpoint` as delivery advances.
    /// One-shot: returns when everything up to now is delivered.
    func push(
        since: UInt64, continuous: Bool, docIDs: [String]?, batchSize: Int,
        onCheckpoint: @escaping @Sendable (UInt64) async -> Void
    ) async throws {
        var options = ChangesSender.Options(dialect: access.dialect, pushing: true)
        options.since = since
        options.continuous = continuous
        options.batchSize = batchSize
        options.docIDs = docIDs.map(Set.init)
        let sender = ChangesSender(
            store: store, connection: link, options: options, progress: progress, logger: logger, peerHas: receiver.peerHas,
            coverage: coverage, onCheckpoint: onCheckpoint)
        activePush.withLock { $0 = sender }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await sender.run() }
            if continuous {
                // Save progress now and then while the push runs.
                group.addTask {
                    var last = since
                    while !Task.isCancelled {
                        try await Task.sleep(for: Self.checkpointInterval)
                        let delivered = sender.delivered
                        if delivered != last {
                            last = delivered
                            await onCheckpoint(delivered)
                        }
                    }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Subscribes to the peer's changes after `since`; one-shot returns when caught
    /// up and every wanted revision is stored. Calls `onCheckpoint` with the peer
    /// sequence through which everything is in.
    func pull(
        since: JSON?, continuous: Bool, channels: [String]?, docIDs: [String]?, batchSize: Int,
        purgeOnRemoval: Bool = false, onCheckpoint: @escaping @Sendable (JSON) async -> Void
    ) async throws {
        receiver.beginPull(since: since, continuous: continuous, purgeOnRemoval: purgeOnRemoval)
        var message = BLIPMessage(profile: ReplicationMessages.subChanges, properties: [("batch", String(batchSize))])
        if access.dialect.namesByVersions { message["versioning"] = access.dialect.version.subChangesVersioning }
        if let since { message["since"] = since.canonicalString }
        if continuous { message["continuous"] = "true" }
        if let channels {
            message["filter"] = "sync_gateway/bychannel"
            message["channels"] = channels.joined(separator: ",")
        }
        if let docIDs { message.body = JSON.object(["docIDs": .array(docIDs.map { .string($0) })]).canonicalBytes() }
        _ = try await link.sendRequest(message)
        if continuous {
            var last = since
            while !Task.isCancelled && !connection.isClosed {
                try await Task.sleep(for: Self.checkpointInterval)
                if let through = receiver.pulledThrough, through != last {
                    last = through
                    await onCheckpoint(through)
                }
            }
            return
        }
        await receiver.waitUntilCaughtUp()
        if connection.isClosed { throw BLIPError.connectionClosed }
        if let through = receiver.pulledThrough { await onCheckpoint(through) }
    }
}
