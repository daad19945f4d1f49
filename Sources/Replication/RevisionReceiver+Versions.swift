import BLIP
import DocumentModel
import DocumentStore
import Foundation

// Receiving from a peer that names revisions by versions (`BLIP_3+CBMobile_4`,
// Couchbase Lite 4), as Sync Gateway 4 answers it (`CheckProposedVersion` in db/crud.go,
// `RevToInsert::history` in couchbase-lite-core's ReplicatorTypes.cc).
extension RevisionReceiver {
    /// A `rev` whose `rev` property is the current version and `history` the rest of the
    /// vector (merge versions, `;`, previous versions, possibly revision IDs from before the
    /// peer's upgrade). The revision becomes a child of the document's current winner
    /// with a revision ID derived as for any edit (§2), so every node that accepts it
    /// names it alike (docs/architecture.md §10.9 rule 2). With `noConflicts` (a Couchbase
    /// Lite 4 client) the store refuses it (409) unless its vector continues the winner's;
    /// without (what Shoal's replicator pulls from a Sync Gateway 4 or Shoal node), one
    /// that is newer than the winner becomes its child and a concurrent one a branch (a
    /// conflict the node resolves), rule 5.
    ///
    /// The vector is checked for causality (`VersionVector.checkCausality`) when a client
    /// sent it; not when a server did (what Shoal's replicator pulls): a server shows its
    /// winner with the versions of the branches it closed in its history
    /// (`DocumentStore.winnerVectorOverLeaves`), and a closed branch may be newer than the
    /// winner (written later, or on a clock ahead), so that a client holding the branch
    /// takes the winner as its successor. Refusing that vector left such a client on the
    /// closed branch for good.
    static func parseVersionedRev(
        _ message: BLIPMessage, noConflicts: Bool = true, checkingCausality: Bool = true
    ) throws(BLIPError) -> DocumentUpdate {
        guard let docID = message["id"], !docID.isEmpty else { throw ReplicationMessages.error(400, "rev without a document ID") }
        guard let revString = message["rev"], !revString.isEmpty else {
            throw ReplicationMessages.error(400, "rev of '\(docID)' without a version")
        }
        let vector = try parseVector(docID: docID, checkingCausality: checkingCausality) { () throws(VersionVectorError) in
            try VersionVector.parseRevMessage(rev: revString, history: message["history"]).vector
        }
        let deleted = deletedProperty(message)
        if let object = ObjectBody(canonical: message.body), !object.hasUnderscoreKey {
            return DocumentUpdate(
                docID: docID, object: object, deleted: deleted, mode: .edit(parent: nil), noConflicts: noConflicts,
                version: vector)
        }
        let parsed = try ReplicationMessages.parseJSONBody(message)
        guard var body = parsed.objectValue ?? (message.body.isEmpty ? [:] : nil) else {
            throw ReplicationMessages.error(400, "rev body of '\(docID)' must be a JSON object")
        }
        let bodyDeleted = body["_deleted"]?.boolValue == true
        for key in metadataKeys { body.removeValue(forKey: key) }
        return DocumentUpdate(
            docID: docID, body: body, deleted: deleted || bodyDeleted, mode: .edit(parent: nil), noConflicts: noConflicts,
            version: vector)
    }

    /// `changes` from a version-vector peer (what Shoal's replicator pulls from a Sync
    /// Gateway 4 or Shoal node over `BLIP_3+CBMobile_4`): `[seq, docID, version, flags?,
    /// bodySize?]`, the version being the revision's current version. Per entry: 0 when our
    /// winner's vector holds that version (we have it or something newer), else the versions
    /// we know (`[our current version]`, `[]` for a document we lack): send it. Entries that
    /// say access was lost are never wanted (purged with `purge_on_removal`).
    func handleVersionedChanges(_ items: [JSON]) async throws(BLIPError) -> BLIPMessage {
        var entries: [(sequence: JSON, docID: String, version: Version, text: String, lostAccess: Bool)] = []
        for item in items {
            guard let fields = item.arrayValue, fields.count >= 3, let docID = fields[1].stringValue, !docID.isEmpty,
                  let text = fields[2].stringValue, !text.isEmpty
            else { throw ReplicationMessages.error(400, "malformed changes entry \(item)") }
            let version = try Self.parseVector(docID: docID, checkingCausality: false) { () throws(VersionVectorError) in
                VersionVector(try Version(parsing: text))
            }.current
            let lost = ReplicationMessages.ChangeEntry.saysLostAccess(ReplicationMessages.ChangeEntry.flags(fields))
            entries.append((fields[0], docID, version, text, lost))
        }
        func answers(_ positions: [Int]) async throws(BLIPError) -> [JSON?] {
            let asked = positions.map { entries[$0] }
            let found: [String: WinnerVersion]
            do {
                found = try await store.winnerVersions(asked.filter { !$0.lostAccess }.map(\.docID))
            } catch {
                throw ReplicationMessages.error(error)
            }
            return asked.map { entry in
                if entry.lostAccess { return nil }
                guard let winner = found[entry.docID] else { return .array([]) }
                if winner.vector.contains(entry.version) { return nil }
                return .array([.string(winner.vector.current.description)])
            }
        }
        // What another connection is receiving is asked for once (`RevisionClaims`).
        let wanted = try await claimed(
            try await answers(Array(entries.indices)), wants: { $0 != nil }, key: { Self.key(entries[$0].docID, entries[$0].text) },
            recheck: answers)
        if entries.contains(where: \.lostAccess) { await purgeLost(entries.map { ($0.docID, $0.lostAccess) }) }
        progress.update { $0.docsCheckedPull += entries.count }
        updatePull { state in
            for (entry, answer) in zip(entries, wanted) {
                let index = state.tracker.add(entry.sequence, parts: answer == nil ? 0 : 1)
                if let offered = entry.sequence.intValue { state.highestOffered = max(state.highestOffered ?? offered, offered) }
                if answer != nil { state.pending[Self.key(entry.docID, entry.text)] = index }
            }
        }
        var answers = wanted.map { $0 ?? 0 }
        while answers.last == 0 { answers.removeLast() }
        return BLIPMessage(body: JSON.array(answers).canonicalBytes())
    }

    /// Parses a received vector and (unless `checkingCausality` is false) checks it
    /// (`VersionVector.checkCausality`); a bad one is a 400 naming the document.
    static func parseVector(
        docID: String, checkingCausality: Bool = true, _ parse: () throws(VersionVectorError) -> VersionVector
    ) throws(BLIPError) -> VersionVector {
        do {
            let vector = try parse()
            if checkingCausality { try vector.checkCausality() }
            return vector
        } catch {
            throw ReplicationMessages.error(400, "invalid version vector of document '\(docID)': \(error)")
        }
    }

    /// `proposeChanges` from a version-vector peer: `[docID, version, parent?, bodySize?]`,
    /// where `version` is the proposed current version (or the whole vector, which newer
    /// clients send) and `parent` the version (or, from before the peer's upgrade, the
    /// revision ID) it last had from us. Per entry: 0 = send it, 304 = have it, 409 = it
    /// conflicts (`{"status": 409, "rev": our current version}` with `conflictIncludesRev`).
    func handleProposedVersions(_ message: BLIPMessage, items: [JSON]) async throws(BLIPError) -> BLIPMessage {
        var proposals: [Proposal] = []
        for item in items {
            guard let fields = item.arrayValue, fields.count >= 2, let docID = fields[0].stringValue, !docID.isEmpty,
                  let text = fields[1].stringValue, !text.isEmpty
            else { throw ReplicationMessages.error(400, "malformed proposeChanges entry \(item)") }
            let parent = fields.count > 2 ? fields[2].stringValue.flatMap { $0.isEmpty ? nil : $0 } : nil
            proposals.append(try Proposal(docID: docID, text: text, parent: parent))
        }
        func statuses(_ positions: [Int]) async throws(BLIPError) -> [(status: Int, current: String?)] {
            let asked = positions.map { proposals[$0] }
            let found: [String: WinnerVersion]
            do {
                found = try await store.winnerVersions(asked.map(\.docID))
            } catch {
                throw ReplicationMessages.error(error)
            }
            return asked.map { proposal in
                let winner = found[proposal.docID]
                return (proposal.status(against: winner), winner?.vector.current.description)
            }
        }
        // A proposal answered "send it" claims the revision (`RevisionClaims`): the same
        // revision proposed over another connection meanwhile waits for it.
        let answers = try await claimed(
            try await statuses(Array(proposals.indices)), wants: { $0.status == 0 },
            key: { Self.key(proposals[$0].docID, proposals[$0].revisionName) }, recheck: statuses)
        return Self.proposeChangesReply(message, answers)
    }

    /// One proposed revision of a version-vector peer.
    struct Proposal {
        var docID: String
        /// The proposed vector: the current version alone, or all of it when sent whole.
        var vector: VersionVector?
        /// A revision ID proposed instead (a document not edited since the peer's upgrade).
        var revID: RevID?
        var parent: String?

        init(docID: String, text: String, parent: String?) throws(BLIPError) {
            self.docID = docID
            self.parent = parent
            if !text.contains("@"), let revID = RevID(text) {
                self.revID = revID
            } else {
                vector = try RevisionReceiver.parseVector(docID: docID) { () throws(VersionVectorError) in
                    try VersionVector.parseHistory(text).vector
                }
            }
        }

        /// How its `rev` will name it: the current version (or the revision ID).
        var revisionName: String { vector?.current.description ?? revID?.description ?? "" }

        /// Sync Gateway 4's answer (`CheckProposedVersion`), against our winner: new
        /// document 0; a version our winner's vector holds 304; a parent that is our
        /// current version (or winning revision ID) 0; a newer version of our current
        /// version's own writer 0; a whole vector that holds our current version 0; a
        /// deleted document without a parent 0; anything else 409.
        func status(against winner: WinnerVersion?) -> Int {
            guard let winner, let winnerRev = winner.tree.winner else { return 0 }
            if let revID {
                // A legacy revision: the revision-tree answer.
                return RevisionReceiver.proposalStatus(rev: revID, parent: parent.flatMap(RevID.init), tree: winner.tree)
            }
            guard let vector else { return 409 }
            let current = winner.vector.current
            if winner.vector.contains(vector.current) { return 304 }
            if let parent {
                if parent == current.description || parent == winnerRev.description { return 0 }
                if let version = try? Version(parsing: parent), version == current { return 0 }
            } else if winner.tree.isDeleted {
                return 0
            }
            if current.source == vector.current.source && current.time < vector.current.time { return 0 }
            if vector.count > 1 && vector.contains(current) { return 0 }
            return 409
        }
    }
}
