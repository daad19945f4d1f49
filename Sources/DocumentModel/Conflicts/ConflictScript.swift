/// The configured JavaScript conflict function `function(conflicts, base)` as seen
/// from DocumentModel; owns nothing but the call. The module that embeds the
/// JavaScript engine implements it (DocumentModel has no engine, §1).
///
/// - `conflicts`: the live leaves' bodies, best first in winner order, each an
///   object of the user properties plus `_attachments` (when present) plus
///   `_rev` (the leaf's revision ID as a string).
/// - `base`: the merge base body with its `_rev`, or nil (JavaScript `null`) when
///   the live leaves have no common ancestor.
/// - Returns the resolved body (an object), or nil / `.null` to delete the
///   document. Throwing leaves the conflict in place (`ConflictOutcome.failed`).
///
/// The function must be pure (no clock, no randomness, no node identity):
/// every node runs it on the same input and must get the same result (§4 rule 1).
public protocol ConflictScript: Sendable {
    func resolve(conflicts: [JSON], base: JSON?) throws -> JSON?
}
