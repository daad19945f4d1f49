// Replication insert: adding a revision together with its ancestry.

extension RevTree {
    /// Replication insert. `history[0]` is the new revision, `history[1]` its
    /// parent, and so on (generations must descend by exactly one, down to ≥ 1,
    /// else `.invalidHistory`). Every unknown revision is added; the first known
    /// one is where the new branch attaches; if none is known, the oldest given
    /// becomes a new root (a stemmed history). Only `history[0]` gets `deleted`
    /// and `hasBody`; added ancestors are live, bodiless, with the same `sequence`.
    ///
    /// Returns how many revisions were added (0 when `history[0]` is already
    /// known: nothing changes) and the index in `history` of the first known
    /// revision (nil if none was known).
    @discardableResult
    public mutating func insert(history: [RevID], deleted: Bool, hasBody: Bool,
                                sequence: UInt64) throws(RevTreeError) -> (added: Int, commonAncestorIndex: Int?) {
        guard let newest = history.first else { throw .invalidHistory("empty history") }
        var expected = newest.generation
        for (i, rev) in history.enumerated() {
            guard rev.generation == expected else {
                throw .invalidHistory("history[\(i)] is \(rev), expected generation \(expected)")
            }
            guard expected >= 1 else {
                throw .invalidHistory("history[\(i)] has generation \(expected), below 1")
            }
            expected &-= 1
        }
        var known: Int?
        for (i, rev) in history.enumerated() where indexByRev[rev] != nil {
            known = i
            break
        }
        if known == 0 { return (0, 0) }
        let oldestNew = (known ?? history.count) - 1
        var parentIndex = known.flatMap { indexByRev[history[$0]] }
        for i in stride(from: oldestNew, through: 0, by: -1) {
            let isNewest = i == 0
            append(history[i], parent: parentIndex, deleted: isNewest && deleted,
                   hasBody: isNewest && hasBody, sequence: sequence)
            parentIndex = nodes.count - 1
        }
        return (oldestNew + 1, known)
    }
}
