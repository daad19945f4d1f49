import DocumentModel
import Foundation
import GRDB

/// Running the gate for a whole batch before its transaction: one call into the gate
/// (e.g. one hand-off to the JavaScript engine's thread for all documents) instead of
/// one per revision inside the transaction. The outcome is only used when the revision
/// turns out to have the parent it was evaluated with; otherwise `apply` evaluates it
/// again in the transaction, so the result is always that of the actual parent.
extension DocumentStore {
    /// A gate outcome computed before the transaction, valid for `parent`.
    struct GateOutcome: Sendable {
        let parent: RevID?
        /// Whether the parent's body was passed (`oldDoc` non-null).
        let parentHadBody: Bool
        let result: Result<RevisionAccess, StoreError>
    }

    /// Fills in `gateOutcome` for the updates whose revision ID and body are known
    /// before the transaction (no attachments): new documents, edits of a named parent,
    /// replicated revisions.
    func preEvaluateGate(_ prepared: inout [Result<PreparedUpdate, StoreError>], author: (any Sendable)?) async {
        // A gate that ignores the parent is cheap: it runs in the transaction.
        guard let gate, gate.readsParentBody, prepared.count > 1 else { return }
        var candidates: [(index: Int, revID: RevID, parent: RevID?)] = []
        for (index, item) in prepared.enumerated() {
            guard case .success(let update) = item, update.encoded != nil else { continue }
            switch update.mode {
            case .edit(let parent):
                guard let revID = update.editRevision else { continue }
                candidates.append((index, revID, parent))
            case .replicate(let history):
                candidates.append((index, history[0], history.count > 1 ? history[1] : nil))
            }
        }
        guard candidates.count > 1 else { return }
        // The parents' bodies (and whether each is a tombstone), in one read.
        let wanted = candidates.compactMap { candidate -> (String, RevID)? in
            guard let parent = candidate.parent, case .success(let update) = prepared[candidate.index] else { return nil }
            return (update.docID, parent)
        }
        let parents = (try? await parentBodies(wanted)) ?? [:]
        var revisions: [GateRevision] = []
        for candidate in candidates {
            guard case .success(let update) = prepared[candidate.index] else { continue }
            let parent = candidate.parent.flatMap { parents["\(update.docID)\u{0}\($0)"] }
            revisions.append(GateRevision(
                docID: update.docID, revID: candidate.revID, object: update.properties, deleted: update.deleted,
                parentBody: parent?.body, parentDeleted: parent?.deleted ?? false))
        }
        let results = await gate.evaluate(batch: revisions, author: author)
        for (candidate, (revision, result)) in zip(candidates, zip(revisions, results)) {
            guard case .success(var update) = prepared[candidate.index] else { continue }
            update.gateOutcome = GateOutcome(parent: candidate.parent, parentHadBody: revision.parentBody != nil, result: result)
            prepared[candidate.index] = .success(update)
        }
    }

    /// Bodies of `(docID, rev)` pairs that are stored, keyed `docID NUL rev`.
    private func parentBodies(_ wanted: [(String, RevID)]) async throws(StoreError) -> [String: (body: [String: JSON], deleted: Bool)] {
        guard !wanted.isEmpty else { return [:] }
        return try await read { db in
            var found: [String: (body: [String: JSON], deleted: Bool)] = [:]
            for (docID, rev) in wanted {
                guard let row = try DocumentRow.load(db, key: docID), let node = row.tree.node(for: rev), node.hasBody,
                      let body = try row.body(db, of: rev)
                else { continue }
                found["\(docID)\u{0}\(rev)"] = (body, node.deleted)
            }
            return found
        }
    }

    /// The gate's outcome for a revision whose actual parent is now known: the one
    /// computed before the transaction when it was computed for that parent, else a
    /// fresh evaluation.
    static func gateAccess(
        _ context: WriteContext, update: PreparedUpdate, revID: RevID, body: ObjectBody,
        parent: RevID?, parentBody: [String: JSON]?, parentDeleted: Bool
    ) throws(StoreError) -> RevisionAccess? {
        guard context.gate != nil else { return nil }
        if let outcome = update.gateOutcome, outcome.parent == parent, outcome.parentHadBody == (parentBody != nil) {
            return try outcome.result.get()
        }
        return try evaluateGate(
            context, docID: update.docID, revID: revID, body: body, deleted: update.deleted,
            parentBody: parentBody, parentDeleted: parentDeleted)
    }
}
