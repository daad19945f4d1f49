import BLIP
import DocumentModel
import DocumentStore
import Foundation

extension RevisionReceiver {
    /// Metadata keys a `rev` body may carry that are not user data.
    static let metadataKeys: Set<String> = ["_id", "_rev", "_deleted", "_revisions", "_exp", "_removed"]

    /// `rev` (immediate handler, called by the connection's reader): one revision with
    /// its history. A revision without attachments goes straight to the inserter,
    /// unparsed; one with attachments gets a task that fetches the missing ones first.
    /// The reply is sent only once the revision (and its attachments) is durably stored.
    func receiveRev(_ message: BLIPMessage, responder: BLIPResponder) {
        // Canonical JSON escapes no ASCII letter, and any JSON encoder writes this
        // key as is; a body without these bytes has no `_attachments` property.
        guard message.body.containsSubsequence(Self.attachmentsKey) else {
            inserter.enqueue(message: message, responder: responder)
            return
        }
        Task {
            let update: DocumentUpdate
            do {
                update = try Self.parseRev(message, dialect: dialect)
                try await fetchMissingAttachments(update)
            } catch {
                let failure = (error as any Error) as? BLIPError ?? BLIPError(code: 500, message: "\(error)")
                inserted([RevisionInserter.Outcome(
                    responder: responder, docID: message["id"], revID: message["rev"], result: .failure(failure))])
                return
            }
            inserter.enqueue(update: update, responder: responder, remoteSequence: message["sequence"].flatMap { UInt64($0) })
        }
    }

    private static let attachmentsKey = Array("\"_attachments\"".utf8)

    /// A failure of the store itself, not of the revision: 507 (the disk is full), 503 (the
    /// store is closing or being rekeyed). The revision would be stored later.
    static func isStoreFailure(_ error: BLIPError) -> Bool {
        error.domain == ReplicationMessages.httpDomain && (error.code == 507 || error.code == 503)
    }

    /// Revisions the store could not take: their claims go (another link may get them),
    /// but they stay pending, so the pull's checkpoint stops before them; the connection
    /// closes, and the replicator's next connection starts again from that checkpoint and
    /// is offered them again. (Skipping them, as a refused revision is skipped, would leave
    /// this node without them for good: every peer's checkpoint would have passed them.)
    func abandon(_ revisions: [(docID: String, rev: String)], because error: BLIPError) {
        if claims.holdsAny(owner: ObjectIdentifier(self)) {
            claims.release(revisions.map { Self.key($0.docID, $0.rev) }, owner: ObjectIdentifier(self))
        }
        let first = revisions.first.map { "\($0.docID) \($0.rev)" } ?? "a revision"
        let closing = BLIPError(
            code: error.code,
            message: "the store could not take \(first) (\(error.code): \(error.message)): reconnecting to get it again")
        Task { [connection] in await connection.close(error: closing) }
    }

    /// A batch of revisions is stored (or failed): track them, then answer them all.
    func inserted(_ outcomes: [RevisionInserter.Outcome]) {
        var finished: [(docID: String, rev: String, failed: Bool)] = []
        finished.reserveCapacity(outcomes.count)
        var unknown = 0
        var stored = 0
        var unstorable: [(docID: String, rev: String)] = []
        var storeFailure: BLIPError?
        for outcome in outcomes {
            if case .failure(let error) = outcome.result, Self.isStoreFailure(error) {
                // The store could not take it (a full disk, a store closing): not this
                // revision's fault. It stays pending, so that no checkpoint passes it.
                storeFailure = storeFailure ?? error
                if let docID = outcome.docID, let rev = outcome.revID { unstorable.append((docID, rev)) }
            } else if let docID = outcome.docID, let rev = outcome.revID {
                finished.append((docID, rev, (try? outcome.result.get()) == nil))
            } else {
                unknown += 1
            }
            if outcome.sequence != nil { stored += 1 }
        }
        finish(finished)
        if let storeFailure { abandon(unstorable, because: storeFailure) }
        progress.update {
            $0.docsFailedPull += unknown
            $0.revisions.received += outcomes.count
            $0.revisions.stored += stored
        }
        connection.respond(outcomes.map { outcome in
            (outcome.responder, outcome.result.map { BLIPMessage() })
        })
    }

    /// `dialect.refusesBranches`: the update is refused (409) if it would start a branch.
    /// `dialect.namesByVersions`: `rev` and `history` are a version vector (CBMobile_4).
    static func parseRev(_ message: BLIPMessage, dialect: PeerDialect = PeerDialect()) throws(BLIPError) -> DocumentUpdate {
        let noConflicts = dialect.refusesBranches
        if dialect.namesByVersions {
            return try parseVersionedRev(message, noConflicts: noConflicts, checkingCausality: dialect.peer == .client)
        }
        // The common case: a canonical body without `_` keys (as Shoal and Couchbase
        // Lite send them) is validated, not parsed, and stored as received.
        if let docID = message["id"], let revString = message["rev"],
           let object = ObjectBody(canonical: message.body), !object.hasUnderscoreKey {
            var update = DocumentUpdate(
                docID: docID, object: object, deleted: deletedProperty(message),
                mode: .replicate(history: try history(message, rev: revString)), noConflicts: noConflicts)
            try attachShoalVector(message, to: &update)
            return update
        }
        let parsed = try ReplicationMessages.parseJSONBody(message)
        guard var body = parsed.objectValue ?? (message.body.isEmpty ? [:] : nil) else {
            throw ReplicationMessages.error(400, "rev body must be a JSON object")
        }
        guard let docID = message["id"] ?? body["_id"]?.stringValue else {
            throw ReplicationMessages.error(400, "rev without a document ID")
        }
        guard let revString = message["rev"] ?? body["_rev"]?.stringValue else {
            throw ReplicationMessages.error(400, "rev without a valid revision ID")
        }
        let history = try history(message, rev: revString)
        let deleted = deletedProperty(message) || body["_deleted"]?.boolValue == true
        for key in metadataKeys { body.removeValue(forKey: key) }
        var update = DocumentUpdate(
            docID: docID, body: body, deleted: deleted, mode: .replicate(history: history), noConflicts: noConflicts)
        try attachShoalVector(message, to: &update)
        return update
    }

    /// The vector a Shoal peer sent with a revision (`shoal-vv`), with its text (stored as
    /// it came when it is the revision's whole vector). Parsed, not checked for
    /// causality: a node whose clock was held back (a peer's time more than the allowed
    /// skew ahead) writes versions older than some it descends from, and its peers must
    /// still take them.
    private static func attachShoalVector(_ message: BLIPMessage, to update: inout DocumentUpdate) throws(BLIPError) {
        guard let text = message[ReplicationMessages.versionVectorProperty] else { return }
        update.version = try parseVector(docID: update.docID, checkingCausality: false) { () throws(VersionVectorError) in
            try VersionVector(parsing: text)
        }
        update.versionText = text
    }

    /// The revision and its ancestors, newest first: `rev`, then the `history` property.
    static func history(_ message: BLIPMessage, rev revString: String) throws(BLIPError) -> [RevID] {
        guard let rev = RevID(revString) else {
            throw ReplicationMessages.error(400, "rev without a valid revision ID")
        }
        var history = [rev]
        if let list = message["history"], !list.isEmpty {
            for item in list.split(separator: ",") {
                guard let parent = RevID(item.trimmingCharacters(in: .whitespaces)) else {
                    throw ReplicationMessages.error(400, "invalid revision in history: \(item)")
                }
                history.append(parent)
            }
        }
        return history
    }

    /// The `deleted` property (`1` or `true`).
    static func deletedProperty(_ message: BLIPMessage) -> Bool {
        message["deleted"].map { $0 == "1" || $0 == "true" } ?? false
    }

    /// Fetches (and verifies) every attachment the body names that is not stored yet.
    /// The request names the document (as Couchbase Lite 3 does), so a peer that limits
    /// what we may read can check it. With `provesAttachments`, one we already hold is
    /// accepted only if the revision's parent has it or the peer proves it has the bytes.
    private func fetchMissingAttachments(_ update: DocumentUpdate) async throws(BLIPError) {
        guard let attachments = update.body["_attachments"]?.objectValue else { return }
        let docID = update.docID
        for (name, entry) in attachments {
            guard entry["data"] == nil, let digest = entry["digest"]?.stringValue else { continue }
            if store.blobs.contains(digest) {
                if provesAttachments, try await !parentHasAttachment(update, digest: digest) {
                    try await requireProof(of: digest, name: name)
                }
                continue
            }
            let reply = try await connection.sendRequest(BLIPMessage(
                profile: ReplicationMessages.getAttachment, properties: [("digest", digest), ("docID", docID)]))
            do {
                // Hashed once, while it is written; content that is not `digest` is dropped.
                _ = try await store.blobs.store(reply.body, expecting: digest)
            } catch let error as StoreError where error.kind == .badRequest {
                throw ReplicationMessages.error(400, "attachment \(name) does not match its digest \(digest)")
            } catch {
                throw ReplicationMessages.error(500, "cannot store attachment \(name): \(error)")
            }
            progress.update { $0.attachmentBytesPulled += reply.body.count }
        }
    }

    /// Whether the stored parent of the revision (the second entry of its history) has
    /// the attachment: then the peer sends an unchanged stub of what it could read.
    private func parentHasAttachment(_ update: DocumentUpdate, digest: String) async throws(BLIPError) -> Bool {
        guard case .replicate(let history) = update.mode, history.count > 1 else { return false }
        let found: (DocumentMetadata, [RevisionLookup])?
        do {
            found = try await store.revisions(update.docID, revs: [history[1]])
        } catch {
            throw ReplicationMessages.error(error)
        }
        guard case .found(let parent)? = found?.1.first else { return false }
        return parent.attachments.values.contains { $0.digest == digest }
    }

    /// Asks the peer to prove it holds the attachment (`proveAttachment` with a random
    /// nonce); a wrong or missing proof refuses the revision (403).
    private func requireProof(of digest: String, name: String) async throws(BLIPError) {
        let nonce = (0..<20).map { _ in UInt8.random(in: 0...255) }
        let expected = await store.blobs.read(digest).map { ReplicationMessages.attachmentProof(nonce: nonce, data: $0) }
        let proof: String
        do {
            let reply = try await connection.sendRequest(BLIPMessage(
                profile: ReplicationMessages.proveAttachment, properties: [("digest", digest)], body: nonce))
            proof = String(decoding: reply.body, as: UTF8.self)
        } catch {
            throw ReplicationMessages.error(403, "attachment \(name) (\(digest)) not proven: \(error.message)")
        }
        guard let expected, proof == expected else {
            throw ReplicationMessages.error(403, "attachment \(name) (\(digest)) not proven")
        }
    }
}

extension DocumentUpdate.Mode {
    /// The revision a replicated update inserts.
    var revision: RevID? {
        if case .replicate(let history) = self { return history.first }
        return nil
    }
}
