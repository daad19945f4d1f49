import BLIP
import DocumentModel
import DocumentStore
import Foundation
import Logging
import Synchronization

/// Replication over one BLIP connection for one database, in both roles: it
/// answers the peer (checkpoints, `subChanges`, `changes`, `rev`, attachments) and
/// can push and pull actively. The protocol is symmetric, so a mesh link and a
/// client/server link use the same session.
public final class ReplicationSession: Sendable {
    public let store: DocumentStore
    public let connection: BLIPConnection
    /// The session's collection on the connection (its `collection` property and handlers).
    public let link: CollectionLink
    public let progress: ReplicationProgress
    /// What the peer may read and as whom it writes.
    public let access: PeerAccess
    let logger: Logger
    let receiver: RevisionReceiver
    /// Senders serving the peer's `subChanges`, cancelled when the session ends.
    private let servingTasks = Mutex<[Task<Void, Never>]>([])
    /// The sender of an active push, if one runs.
    let activePush = Mutex<ChangesSender?>(nil)
    /// What the peer holds, when it is a Shoal node that reads everything
    /// (`exchangesCoverage`): our feed does not offer it those revisions.
    let coverage: PeerCoverage?

    /// For an active continuous replication: every local change delivered and every
    /// peer change received (the `idle` state).
    var isCaughtUp: Bool {
        let pushIdle = activePush.withLock { $0 }?.isCaughtUp ?? true
        return pushIdle && receiver.isPullIdle
    }

    public init(
        store: DocumentStore, connection: BLIPConnection, progress: ReplicationProgress = ReplicationProgress(),
        access: PeerAccess = .full, logger: Logger = Logger(label: "Sync"), link: CollectionLink? = nil
    ) {
        self.store = store
        self.connection = connection
        let link = link ?? CollectionLink(connection: connection)
        self.link = link
        self.progress = progress
        self.access = access
        self.logger = logger
        let coverage = Self.exchangesCoverage(access) ? PeerCoverage(knowledge: MeshKnowledge.of(store)) : nil
        self.coverage = coverage
        receiver = RevisionReceiver(
            store: store, connection: link, progress: progress, author: access.author, origin: access.origin,
            dialect: access.dialect, provesAttachments: access.channels != nil, coverage: coverage, logger: logger)
        receiver.register()
        if let coverage { registerCoverage(coverage) }
        // A pull waiting to catch up is released when the connection goes.
        connection.onClose { [receiver, coverage] in
            coverage?.end()
            receiver.endPull()
        }
        link.setHandler(for: ReplicationMessages.getCheckpoint) { [self] in try await handleGetCheckpoint($0) }
        link.setHandler(for: ReplicationMessages.setCheckpoint) { [self] in try await handleSetCheckpoint($0) }
        link.setHandler(for: ReplicationMessages.subChanges) { [self] in try await handleSubChanges($0) }
        link.setHandler(for: ReplicationMessages.getAttachment) { [self] in try await handleGetAttachment($0) }
        link.setHandler(for: ReplicationMessages.proveAttachment) { [self] in try await handleProveAttachment($0) }
        link.setHandler(for: RevisionSources.profile) { [self] message in
            // Any revision of any document: only for peers that may read everything (mesh
            // peers, administrators, users holding the `*` channel).
            guard try await access.readsEverything() else {
                throw ReplicationMessages.error(403, "\(RevisionSources.profile) needs access to every channel")
            }
            return try await handleGetRev(message)
        }
        RevisionSources.register(self)
        progress.track(connection)
        progress.attach(store)
        if let coverage {
            let reporter = Task { [weak self] in
                guard let self else { return }
                await reportCoverage(coverage)
            }
            servingTasks.withLock { $0.append(reporter) }
        }
    }

    /// Stops serving the peer (call when the connection has ended).
    public func close() {
        let tasks = servingTasks.withLock { tasks in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in tasks { task.cancel() }
        coverage?.end()
        receiver.endPull()
        RevisionSources.unregister(self)
        progress.untrack(connection)
    }

    // MARK: Checkpoints (stored as local documents `checkpoint/<client>`)

    static func checkpointID(_ client: String) -> String { "checkpoint/\(client)" }

    func handleGetCheckpoint(_ message: BLIPMessage) async throws -> BLIPMessage {
        guard let client = message["client"], !client.isEmpty else {
            throw ReplicationMessages.error(400, "getCheckpoint needs a client property")
        }
        guard let document = try await store.localDocument(Self.checkpointID(client)) else {
            throw ReplicationMessages.error(404, "no checkpoint for \(client)")
        }
        return BLIPMessage(properties: [("rev", document.rev)], body: JSON.object(document.body).canonicalBytes())
    }

    func handleSetCheckpoint(_ message: BLIPMessage) async throws -> BLIPMessage {
        guard let client = message["client"], !client.isEmpty else {
            throw ReplicationMessages.error(400, "setCheckpoint needs a client property")
        }
        guard let body = try ReplicationMessages.parseJSONBody(message).objectValue else {
            throw ReplicationMessages.error(400, "checkpoint body must be a JSON object")
        }
        do {
            let rev = try await store.putLocal(Self.checkpointID(client), body: body, rev: message["rev"])
            return BLIPMessage(properties: [("rev", rev)])
        } catch {
            throw ReplicationMessages.error(error)
        }
    }

    // MARK: Serving the peer's pull

    /// `subChanges`: start sending changes after `since` (JSON), once or continuously,
    /// optionally only for `docIDs` (body) — the reply comes at once; changes follow.
    func handleSubChanges(_ message: BLIPMessage) async throws -> BLIPMessage {
        // Couchbase Lite 3.1+ names its document model, which must be the connection's:
        // version vectors on `BLIP_3+CBMobile_4`, revision trees on 3 and 2 (refused as
        // couchbase-lite-core's passive Pusher refuses it).
        let dialect = access.dialect
        let versioning = message["versioning"] ?? dialect.version.subChangesVersioning
        guard versioning == dialect.version.subChangesVersioning else {
            logger.notice("""
                refused subChanges with versioning '\(versioning)' on a \(dialect) connection: \
                501 Incompatible document versioning.
                """)
            throw ReplicationMessages.error(501, "Incompatible document versioning.")
        }
        var options = ChangesSender.Options(dialect: dialect)
        if let since = message["since"], !since.isEmpty {
            let parsed = (try? JSON.parse(since)) ?? .string(since)
            options.since = Self.localSequence(parsed)
        }
        options.continuous = message["continuous"].map { $0 == "true" || $0 == "1" } ?? false
        options.activeOnly = message["activeOnly"].map { $0 == "true" || $0 == "1" } ?? false
        if let batch = message["batch"].flatMap(Int.init), batch > 0 { options.batchSize = min(batch, 1000) }
        if let filter = message["filter"] {
            guard filter == "sync_gateway/bychannel" else { throw ReplicationMessages.error(400, "unknown filter \(filter)") }
            let channels = (message["channels"] ?? "").split(separator: ",").map(String.init).filter { !$0.isEmpty }
            guard !channels.isEmpty else { throw ReplicationMessages.error(400, "sync_gateway/bychannel needs channels") }
            options.channels = Set(channels)
        }
        if let ids = try ReplicationMessages.parseJSONBody(message)["docIDs"]?.arrayValue {
            options.docIDs = Set(ids.compactMap(\.stringValue))
        }
        let sender = ChangesSender(
            store: store, connection: link, options: options, progress: progress, logger: logger, peerHas: receiver.peerHas,
            coverage: coverage, visibleChannels: access.channels, lostChannels: access.lostChannels)
        let task = Task { [logger, connection] in
            do {
                try await sender.run()
            } catch is CancellationError {
                logger.debug("serving subChanges cancelled")
            } catch {
                // A feed we cannot serve must not look finished to the peer: the
                // connection ends with an error and the peer's replicator retries.
                guard !connection.isClosed else { return }
                logger.warning("serving subChanges failed: \(error)")
                await connection.close(error: BLIPError(code: BLIPError.Code.unspecified, message: "changes feed failed: \(error)"))
            }
        }
        servingTasks.withLock { $0.append(task) }
        return BLIPMessage()
    }

    /// Our sequences are integers; Sync Gateway style `"N"` or `"A:N"` strings use their last number.
    static func localSequence(_ json: JSON) -> UInt64 {
        if let value = json.intValue { return UInt64(max(0, value)) }
        if let text = json.stringValue, let last = text.split(separator: ":").last, let value = UInt64(last) { return value }
        return 0
    }

    // MARK: Attachments

    /// `getAttachment`: the blob with the given digest.
    /// A peer limited to some channels must name the document (`docID`): the attachment
    /// is sent only if that document is in the peer's channels and one of its leaves has it.
    func handleGetAttachment(_ message: BLIPMessage) async throws -> BLIPMessage {
        guard let digest = message["digest"] else { throw ReplicationMessages.error(400, "getAttachment needs a digest") }
        if let channels = access.channels, let visible = try await channels(), visible["*"] == nil {
            guard let docID = message["docID"], try await documentHasAttachment(docID, digest: digest, visible: visible) else {
                throw ReplicationMessages.error(403, "no access to attachment \(digest)")
            }
        }
        guard let bytes = await store.blobs.read(digest) else {
            throw ReplicationMessages.error(404, "no attachment with digest \(digest)")
        }
        return BLIPMessage(body: bytes, compressed: bytes.count > 1024)
    }

    /// Whether `docID` is in one of `visible` and one of its leaves has the attachment.
    private func documentHasAttachment(_ docID: String, digest: String, visible: [String: UInt64]) async throws -> Bool {
        guard let channels = try await store.documentChannels(docID: docID), channels.contains(where: { visible[$0] != nil }),
              let (_, lookups) = try await store.revisions(docID, revs: nil)
        else { return false }
        return lookups.contains { lookup in
            guard case .found(let revision) = lookup else { return false }
            return revision.attachments.values.contains { $0.digest == digest }
        }
    }

    /// `proveAttachment`: SHA-1 over (nonce length byte, nonce, attachment), as a digest string.
    func handleProveAttachment(_ message: BLIPMessage) async throws -> BLIPMessage {
        guard let digest = message["digest"], let bytes = await store.blobs.read(digest) else {
            throw ReplicationMessages.error(404, "no attachment with digest \(message["digest"] ?? "")")
        }
        let nonce = message.body
        guard !nonce.isEmpty, nonce.count <= 255 else { throw ReplicationMessages.error(400, "bad nonce") }
        return BLIPMessage(body: Array(ReplicationMessages.attachmentProof(nonce: nonce, data: bytes).utf8))
    }
}
