/// Deterministic conflict resolution (ARCHITECTURE.md §4) as a pure function of
/// a document's revision tree, its live leaves' bodies and the merge base body;
/// owns the rules that decide which revisions a resolution writes. No I/O, no
/// clock, no node identity, no arrival order: two nodes that see the same live
/// leaves (and the same merge base body) write byte-identical revisions.
///
/// Terms: `L₁…Lₙ` are the live leaves best first in winner order (`n ≥ 2`, else
/// `.noConflict` whatever the policy); `W = L₁` is the winning leaf; `B` is the
/// merge base, `tree.mergeBase` (nil when the live leaves share no root).
/// Bodies are user properties plus `_attachments`; other `_` keys in the given
/// bodies are ignored (`userBody`).
///
/// What is written (`ConflictResolution`), for every policy but `none`:
/// - one tombstone per loser `L₂…Lₙ`, in that order: a child of the leaf with
///   `deleted = true` and body `{}` (the same revision a DELETE of that leaf writes);
/// - a child of `W` (`result`) only when the document must change: a tombstone
///   (deleted, `{}`) when the outcome is a delete; the result body `R` when
///   `RevisionBody.digestBody(R) != RevisionBody.digestBody(body(W))`; nothing
///   when `W` already holds the result (fewer revisions, still deterministic).
///
/// Per policy:
/// - `none`: `.keep`.
/// - `winner`: `W` stays; only tombstones. Needs no bodies.
/// - `deletes-win`: the document ends deleted (tombstones on every live leaf,
///   `W` included) when a deleted leaf descends from `B` (`B` is a strict
///   ancestor of it: its branch forks at or after the merge base); when the live
///   leaves share no root (`B` nil) every deleted leaf counts. Otherwise like
///   `winner`. Needs neither bodies nor the merge base body. A tombstone is a
///   tombstone: one written by an earlier resolution on a losing branch counts
///   like a user's delete when it descends from `B`.
/// - `merge`: `R = ConflictMerge.merge(base: body(B), branches: [body(L₁)…body(Lₙ)])`.
///   Needs `body(B)` (else `.needsMergeBase(B)`); when `B` is nil the base is `{}`.
/// - `lww:<field>`: `R` = the body of the live leaf whose `field` ranks highest
///   (see `lastWriteWinner`); ties go to the earlier leaf in winner order.
/// - `js`: `R` = what the `ConflictScript` returns (see `runScript`); nil,
///   `null` or an object with `"_deleted": true` is a delete. Needs `body(B)`
///   like `merge` (`base` is then null when `B` is nil); no script, a throw or
///   a non-object result give `.failed`.
///
/// `merge`, `lww` and `js` need the body of every live leaf; a missing one
/// gives `.failed` (the store keeps the bodies of all leaves, §3).
public enum ConflictResolver {
    /// Resolves the conflict of `tree` with `policy`.
    /// - Parameters:
    ///   - bodies: the bodies of the live leaves (more entries are ignored).
    ///   - mergeBaseBody: the body of `tree.mergeBase`, when this node has it.
    ///   - script: the JavaScript function, for `.js`.
    public static func resolve(tree: RevTree, bodies: [RevID: [String: JSON]], mergeBaseBody: [String: JSON]?,
                               policy: ConflictPolicy, script: (any ConflictScript)? = nil) -> ConflictOutcome {
        let leaves = tree.liveLeaves
        guard leaves.count >= 2 else { return .noConflict }
        let base = tree.mergeBase
        func resolution(_ verdict: Verdict) -> ConflictOutcome {
            .resolved(makeResolution(policy: policy, leaves: leaves, mergeBase: base, winningBody: bodies[leaves[0]],
                                     verdict: verdict))
        }
        switch policy {
        case .none:
            return .keep
        case .winner:
            return resolution(.keepWinner)
        case .deletesWin:
            return resolution(deletedSinceMergeBase(tree).isEmpty ? .keepWinner : .delete)
        case .merge, .lww, .js:
            break
        }
        var leafBodies = [[String: JSON]]()
        leafBodies.reserveCapacity(leaves.count)
        for leaf in leaves {
            guard let body = bodies[leaf] else { return .failed(reason: "the body of live leaf \(leaf) is missing") }
            leafBodies.append(userBody(body))
        }
        let baseBody: [String: JSON]?
        if let base, policy.needsMergeBaseBody {
            guard let body = mergeBaseBody else { return .needsMergeBase(base) }
            baseBody = userBody(body)
        } else {
            baseBody = nil
        }
        switch policy {
        case .merge:
            return resolution(.body(ConflictMerge.merge(base: baseBody ?? [:], branches: leafBodies)))
        case .lww(let field):
            return resolution(.body(leafBodies[lastWriteWinner(field: field, bodies: leafBodies)]))
        case .js:
            guard let script else { return .failed(reason: "policy js needs a conflict script, and none is configured") }
            switch runScript(script, leaves: leaves, bodies: leafBodies, mergeBase: base, baseBody: baseBody) {
            case .success(let verdict): return resolution(verdict)
            case .failure(let failure): return .failed(reason: failure.reason)
            }
        case .none, .winner, .deletesWin:
            preconditionFailure("handled above")
        }
    }

    /// Resolves the conflict of `tree` with the policy `policies` picks for it
    /// (from the type in the winning leaf's body).
    public static func resolve(tree: RevTree, bodies: [RevID: [String: JSON]], mergeBaseBody: [String: JSON]?,
                               policies: ConflictPolicies, script: (any ConflictScript)? = nil) -> ConflictOutcome {
        resolve(tree: tree, bodies: bodies, mergeBaseBody: mergeBaseBody,
                policy: policies.policy(for: tree, bodies: bodies), script: script)
    }

    /// The deleted leaves that count as "deleted since the merge base" for
    /// `deletes-win`, in winner order: those that descend from the merge base,
    /// or every deleted leaf when the live leaves share no root. Empty without a conflict.
    public static func deletedSinceMergeBase(_ tree: RevTree) -> [RevID] {
        guard tree.hasConflict else { return [] }
        let base = tree.mergeBase
        return tree.leaves.filter { leaf in
            guard tree.node(for: leaf)?.deleted == true else { return false }
            guard let base else { return true }
            return tree.isAncestor(base, of: leaf)
        }
    }

    /// A body reduced to what a revision holds: every top-level key starting
    /// with `_` is dropped except `_attachments`, which is dropped when `null`.
    public static func userBody(_ body: [String: JSON]) -> [String: JSON] {
        guard body.keys.contains(where: { $0.utf8.first == UInt8(ascii: "_") }) else { return body }
        return body.filter { key, value in
            guard key.utf8.first == UInt8(ascii: "_") else { return true }
            return key == "_attachments" && !value.isNull
        }
    }

    /// What a policy decided, before it becomes revisions.
    enum Verdict: Equatable {
        /// The winning leaf stays as it is.
        case keepWinner
        /// The document becomes this body (no child when the winning leaf already has it).
        case body([String: JSON])
        /// The document ends deleted.
        case delete
    }

    /// The revisions for `verdict` (see the type's documentation).
    static func makeResolution(policy: ConflictPolicy, leaves: [RevID], mergeBase: RevID?,
                               winningBody: [String: JSON]?, verdict: Verdict) -> ConflictResolution {
        let winningLeaf = leaves[0]
        let result: ConflictResolution.Revision?
        switch verdict {
        case .keepWinner:
            result = nil
        case .delete:
            result = .tombstone(of: winningLeaf)
        case .body(let body):
            let unchanged = winningBody.map { RevisionBody.digestBody($0) == RevisionBody.digestBody(body) } ?? false
            result = unchanged ? nil : ConflictResolution.Revision(parent: winningLeaf, deleted: false, body: body)
        }
        return ConflictResolution(policy: policy, winningLeaf: winningLeaf, mergeBase: mergeBase, result: result,
                                  tombstones: leaves.dropFirst().map(ConflictResolution.Revision.tombstone(of:)))
    }
}
