import BLIP
import DocumentModel
import DocumentStore

// Pushing to a version-vector peer (`BLIP_3+CBMobile_4`) as Couchbase Lite 4 pushes to
// Sync Gateway 4 (couchbase-lite-core's Pusher.cc: `proposeChanges` with
// `conflictIncludesRev=true`, rows `[docID, version, remote version?]`; a 409 answer names
// the peer's current version). Replication.md, "Shoal's replicator over CBMobile_4".
// Also a client's push over revision trees (`PeerDialect.actsAsClient`, as Couchbase Lite
// 3 pushes to Sync Gateway): rows `[docID, revID, remote revID?]`, the same retry with the
// peer's revision as parent when it is an ancestor of ours.
extension ChangesSender {
    /// What the peer answered for one proposed document.
    enum ProposalStatus: Equatable {
        /// 0: send the revision.
        case send
        /// 304: the peer has it.
        case have
        /// 409, with the peer's current version when it named it.
        case conflict(String?)
        /// Any other status (e.g. 403: the peer may not take it).
        case refused(Int)
    }

    /// A `proposeChanges` request with `body`, in order as `changes` is.
    static func proposeChangesRequest(body: [UInt8]) -> BLIPMessage {
        var message = BLIPMessage(
            profile: ReplicationMessages.proposeChanges, properties: [("conflictIncludesRev", "true")], body: body)
        message.inOrder = true
        return message
    }

    /// Queues the `proposeChanges` for `batch`: each document's current version, without a
    /// parent (Shoal keeps no per-peer record of what the peer holds; a 409 tells it).
    func propose(_ batch: Batch) -> PendingReply {
        sendProposal(batch.entries.map { ($0, nil) })
    }

    private func sendProposal(_ rows: [(entry: ReplicationMessages.ChangeEntry, parent: String?)]) -> PendingReply {
        let body = JSON.array(rows.map { row in
            var items: [JSON] = [.string(row.entry.docID), .string(row.entry.version ?? row.entry.revID.description)]
            if let parent = row.parent { items.append(.string(parent)) }
            return .array(items)
        }).canonicalBytes()
        return queue(Self.proposeChangesRequest(body: body))
    }

    /// Per entry of `batch`, wanted (no known ancestors: versions need none) or nil. A 409
    /// naming a version that the document's vector holds means the peer has an older
    /// revision, not a conflict: the document is proposed again with that version as its
    /// parent (couchbase-lite-core's `shouldRetryConflictWithNewerAncestor`). Any other 409
    /// is a conflict: nothing is sent; the pull brings the peer's revision, this node
    /// resolves the conflict (its policy) and offers the resolution, whose vector holds the
    /// peer's version (`DocumentStore.winnerVersions`: the winner's vector over its other leaves).
    func proposalAnswers(to pending: PendingReply, batch: Batch) async throws -> [Set<RevID>?] {
        var statuses = Self.proposalStatuses(try await pending.value.get(), count: batch.entries.count)
        var retries: [(index: Int, parent: String)] = []
        for (index, status) in statuses.enumerated() {
            guard case .conflict(let theirs?) = status else { continue }
            let entry = batch.entries[index]
            if let vector = batch.vectors[entry.docID] {
                guard let version = try? Version(parsing: theirs), version != vector.current, vector.contains(version) else { continue }
            } else {
                // Revision trees (a client's push): the peer's revision is an ancestor of ours.
                guard batch.ancestors["\(entry.docID)\u{0}\(entry.revID)"]?.contains(theirs) == true else { continue }
            }
            retries.append((index, theirs))
        }
        if !retries.isEmpty {
            let reply = try await sendProposal(retries.map { (batch.entries[$0.index], $0.parent) }).value.get()
            for (retry, status) in zip(retries, Self.proposalStatuses(reply, count: retries.count)) {
                statuses[retry.index] = status
            }
        }
        let conflicts = statuses.filter { if case .conflict = $0 { true } else { false } }.count
        let refused = statuses.filter { if case .refused = $0 { true } else { false } }.count
        progress.update {
            $0.docsCheckedPush += batch.entries.count
            $0.docsFailedPush += refused
        }
        if conflicts > 0 {
            logger.info("\(conflicts) proposed documents conflict with the peer's revisions: pulled and resolved here, then offered again")
        }
        return statuses.map { $0 == .send ? [] : nil }
    }

    /// The statuses of a `proposeChanges` reply with `count` entries (trailing zeros may be
    /// left out): a number, or `{"status": 409, "rev": …}`.
    static func proposalStatuses(_ reply: BLIPMessage, count: Int) -> [ProposalStatus] {
        let items = (try? JSON.parse(reply.body))?.arrayValue ?? []
        return (0..<count).map { index in
            guard index < items.count else { return .send }
            let item = items[index]
            let code = item.intValue ?? item["status"]?.intValue ?? -1
            switch code {
            case 0: return .send
            case 304: return .have
            case 409: return .conflict(item["rev"]?.stringValue)
            default: return .refused(Int(clamping: code))
            }
        }
    }
}
