import AccessControl
import DocumentModel
import DocumentStore

/// Read access: what a user of the public port may see (ARCHITECTURE.md §6).
extension DatabaseEndpoint {
    /// The access of a user who does not see everything; nil for administrators, the
    /// mesh and users holding the `*` channel.
    var restrictedAccess: UserAccess? {
        guard let access = principal.access, !access.seesEverything else { return nil }
        return access
    }

    /// Throws 403 unless the user may read the document (its current channels, or
    /// those of `rev` when one is asked for). Unknown documents pass: the caller
    /// answers 404.
    func requireReadable(docID: String, rev: RevID? = nil) async throws(HTTPFailure) {
        guard let access = restrictedAccess else { return }
        let channels: Set<String>?
        do {
            if let rev, let revisionAccess = try await store.revisionAccess(docID: docID, rev: rev) {
                channels = revisionAccess.channels
            } else {
                channels = try await store.documentChannels(docID: docID)
            }
        } catch {
            throw HTTPFailure(error)
        }
        if let channels, !access.canRead(channels) { throw .forbiddenDocument }
    }

    /// Whether the user may read the document (false for unknown documents).
    func isReadable(docID: String) async throws(HTTPFailure) -> Bool {
        guard let access = restrictedAccess else { return true }
        do {
            guard let channels = try await store.documentChannels(docID: docID) else { return false }
            return access.canRead(channels)
        } catch {
            throw HTTPFailure(error)
        }
    }

    /// The channels a feed is limited to, with the sequence each counts from; nil for
    /// the whole database. `requested` is a `sync_gateway/bychannel` filter.
    func feedChannels(requested: Set<String>?) -> [String: UInt64]? {
        if let access = restrictedAccess {
            guard let requested else { return access.channels }
            return access.channels.filter { requested.contains($0.key) }
        }
        guard let requested else { return nil }
        if requested.contains(ChannelSet.all) { return nil }
        return Dictionary(uniqueKeysWithValues: requested.map { ($0, UInt64(0)) })
    }

    /// Throws 403 unless the request acts as an administrator (admin port, no access
    /// control) — for maintenance endpoints a user must not reach.
    func requireAdminPrincipal(_ reason: String) throws(HTTPFailure) {
        guard principal == .admin else { throw HTTPFailure(.forbidden, "forbidden", reason) }
    }
}
