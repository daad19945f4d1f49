import BLIP
import DocumentModel
import DocumentStore
import Foundation

extension RevisionReceiver {
    /// Metadata keys a `rev` body may carry that are not user data.
    static let metadataKeys: Set<String> = ["_id", "_rev", "_deleted", "_revisions", "_exp", "_removed"]

    /// `rev`: one revision with its history. The reply is sent only once the
    /// revision (and its attachments) is durably stored.
    func handleRev(_ message: BLIPMessage) async throws -> BLIPMessage {
        let update: DocumentUpdate
        do {
            update = try parseRev(message)
        } catch {
            if let docID = message["id"], let rev = message["rev"] { finish(docID, rev, failed: true) }
            throw error
        }
        let revString = update.mode.revision?.description ?? ""
        do {
            try await fetchMissingAttachments(update.body)
        } catch {
            finish(update.docID, revString, failed: true)
            throw error
        }
        let result = await inserter.insert(update)
        switch result {
        case .success:
            finish(update.docID, revString, failed: false)
            return BLIPMessage()
        case .failure(let error):
            finish(update.docID, revString, failed: true)
            throw ReplicationMessages.error(error)
        }
    }

    func parseRev(_ message: BLIPMessage) throws(BLIPError) -> DocumentUpdate {
        guard var body = try ReplicationMessages.parseJSONBody(message).objectValue ?? (message.body.isEmpty ? [:] : nil) else {
            throw ReplicationMessages.error(400, "rev body must be a JSON object")
        }
        guard let docID = message["id"] ?? body["_id"]?.stringValue else {
            throw ReplicationMessages.error(400, "rev without a document ID")
        }
        guard let revString = message["rev"] ?? body["_rev"]?.stringValue, let rev = RevID(revString) else {
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
        let deletedProperty = message["deleted"].map { $0 == "1" || $0 == "true" } ?? false
        let deleted = deletedProperty || body["_deleted"]?.boolValue == true
        for key in Self.metadataKeys { body.removeValue(forKey: key) }
        return DocumentUpdate(docID: docID, body: body, deleted: deleted, mode: .replicate(history: history))
    }

    /// Fetches (and verifies) every attachment the body names that is not stored yet.
    private func fetchMissingAttachments(_ body: [String: JSON]) async throws(BLIPError) {
        guard let attachments = body["_attachments"]?.objectValue else { return }
        for (name, entry) in attachments {
            guard entry["data"] == nil, let digest = entry["digest"]?.stringValue, !store.blobs.contains(digest) else {
                continue
            }
            let reply = try await connection.sendRequest(BLIPMessage(
                profile: ReplicationMessages.getAttachment, properties: [("digest", digest)]))
            guard Digests.attachmentDigest(sha1: SHA1.hash(reply.body)) == digest else {
                throw ReplicationMessages.error(400, "attachment \(name) does not match its digest \(digest)")
            }
            do {
                _ = try store.blobs.store(reply.body)
            } catch {
                throw ReplicationMessages.error(500, "cannot store attachment \(name): \(error)")
            }
            progress.update { $0.attachmentBytesPulled += reply.body.count }
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
