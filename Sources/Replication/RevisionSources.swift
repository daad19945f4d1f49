import BLIP
import DocumentModel
import DocumentStore
import Synchronization

/// The Shoal extension message `shoal/getRev` and the peers it can be sent to.
///
/// A node that must resolve a `merge`/`js` conflict but holds only a placeholder
/// of the merge base (it learned the revision from a history) asks the peers it
/// is replicating that database with for the body, one after the other (§4
/// rule 2). A peer that does not know the profile (a Couchbase Lite or Sync
/// Gateway peer answers ERR BLIP/404 "no handler") is not asked again on that
/// connection. The body is checked against its revision ID by the store before
/// it is used (`DocumentStore.storeMissingBody`).
///
/// Request: profile `shoal/getRev`, properties `id` and `rev`, no body.
/// Reply: the revision's body (JSON object, attachments as stubs), property
/// `deleted=1` for a tombstone; ERR HTTP/404 when the peer does not have it.
///
/// Sessions register themselves per database (keyed by the store's identity);
/// the registry holds them weakly.
public enum RevisionSources {
    public static let profile = "shoal/getRev"

    private final class Entry: Sendable {
        weak let session: ReplicationSession?
        let unsupported = Mutex(false)
        init(_ session: ReplicationSession) { self.session = session }
    }

    private static let registry = Mutex<[ObjectIdentifier: [Entry]]>([:])

    static func register(_ session: ReplicationSession) {
        registry.withLock { registry in
            let key = ObjectIdentifier(session.store)
            registry[key, default: []].removeAll { $0.session == nil }
            registry[key, default: []].append(Entry(session))
        }
    }

    static func unregister(_ session: ReplicationSession) {
        registry.withLock { registry in
            let key = ObjectIdentifier(session.store)
            registry[key]?.removeAll { $0.session == nil || $0.session === session }
            if registry[key]?.isEmpty == true { registry[key] = nil }
        }
    }

    /// Number of live sessions of `store` that may be asked.
    public static func peerCount(for store: DocumentStore) -> Int {
        registry.withLock { $0[ObjectIdentifier(store)]?.filter { $0.session != nil }.count ?? 0 }
    }

    /// Asks the peers replicating `store` for the body of `rev` of `docID`; the
    /// first body a peer has wins. Nil when no connected peer has it.
    public static func fetch(store: DocumentStore, docID: String, rev: RevID) async -> [String: JSON]? {
        let entries = registry.withLock { $0[ObjectIdentifier(store)] ?? [] }
        for entry in entries where !entry.unsupported.withLock({ $0 }) {
            guard let session = entry.session, !session.connection.isClosed else { continue }
            let request = BLIPMessage(profile: profile, properties: [("id", docID), ("rev", rev.description)])
            do {
                let reply = try await session.link.sendRequest(request)
                if let body = (try? JSON.parse(reply.body))?.objectValue { return body }
            } catch {
                if error.domain == "BLIP" && error.code == BLIPError.Code.notFound {
                    entry.unsupported.withLock { $0 = true }
                }
            }
        }
        return nil
    }
}

extension ReplicationSession {
    /// `shoal/getRev`: the stored body of one revision (see `RevisionSources`).
    func handleGetRev(_ message: BLIPMessage) async throws -> BLIPMessage {
        guard let docID = message["id"], let rev = message["rev"].flatMap(RevID.init) else {
            throw ReplicationMessages.error(400, "\(RevisionSources.profile) needs id and rev properties")
        }
        let revision: Revision
        do {
            revision = try await store.revision(docID, rev: rev).1
        } catch {
            throw ReplicationMessages.error(error)
        }
        guard let body = revision.body else { throw ReplicationMessages.error(404, "no body for \(docID) \(rev)") }
        var reply = BLIPMessage(body: JSON.object(ReplicationMessages.outgoingBody(body)).canonicalBytes())
        if revision.deleted { reply["deleted"] = "1" }
        return reply
    }
}
