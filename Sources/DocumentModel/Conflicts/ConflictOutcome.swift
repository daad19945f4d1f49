/// What `ConflictResolver` decided for one document; owns nothing but the verdict.
public enum ConflictOutcome: Sendable, Equatable {
    /// Fewer than two live leaves: nothing to resolve.
    case noConflict
    /// Policy `none`: the conflict stays; readers see the winner order's choice.
    case keep
    /// The policy needs the body of this merge base revision (`merge`, `js`) and
    /// it was not given: fetch it from a peer, or leave the conflict to a node
    /// that has it (§4 rule 2).
    case needsMergeBase(RevID)
    /// The revisions to write.
    case resolved(ConflictResolution)
    /// The conflict stays: the script threw or returned something that is not a
    /// body, no script was given for `js`, or a live leaf's body was missing.
    case failed(reason: String)

    /// The resolution, if any.
    public var resolution: ConflictResolution? {
        if case .resolved(let resolution) = self { return resolution }
        return nil
    }
}
