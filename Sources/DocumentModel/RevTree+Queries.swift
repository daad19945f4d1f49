// Read-only queries: leaves, winner, ancestry, common ancestors.

extension RevTree {
    /// All leaves, best first in winner order.
    public var leaves: [RevID] { leafIndices.map { nodes[$0].revID } }

    /// The non-deleted leaves, best first in winner order.
    public var liveLeaves: [RevID] {
        var result = [RevID]()
        for i in leafIndices {
            guard !nodes[i].deleted else { break }   // live leaves sort first
            result.append(nodes[i].revID)
        }
        return result
    }

    /// The current revision: the first leaf in winner order (nil for an empty tree).
    public var winner: RevID? { leafIndices.first.map { nodes[$0].revID } }

    /// Whether the document is deleted: every leaf is deleted (false when empty).
    public var isDeleted: Bool {
        guard let best = leafIndices.first else { return false }
        return nodes[best].deleted
    }

    /// Whether more than one leaf is live.
    public var hasConflict: Bool {
        leafIndices.count >= 2 && !nodes[leafIndices[1]].deleted
    }

    /// Whether `rev` is in the tree and has no children.
    public func isLeaf(_ rev: RevID) -> Bool {
        guard let i = indexByRev[rev] else { return false }
        return childCounts[i] == 0
    }

    /// `rev`, its parent, grandparent, … up to its root; empty if `rev` is unknown.
    public func history(of rev: RevID) -> [RevID] {
        guard var i = indexByRev[rev] else { return [] }
        var result = [RevID]()
        result.reserveCapacity(rev.generation < 4096 ? rev.generation : 4096)
        while true {
            result.append(nodes[i].revID)
            guard let p = nodes[i].parent else { return result }
            i = p
        }
    }

    /// Whether `a` is a strict ancestor of `b`.
    public func isAncestor(_ a: RevID, of b: RevID) -> Bool {
        guard let ia = indexByRev[a], let ib = indexByRev[b] else { return false }
        var current = nodes[ib].parent
        while let c = current {
            if c == ia { return true }
            if nodes[c].revID.generation <= a.generation { return false }
            current = nodes[c].parent
        }
        return false
    }

    /// The leaves that are `rev` or descend from it, best first (for `latest=true`).
    public func leaves(descendingFrom rev: RevID) -> [RevID] {
        guard let target = indexByRev[rev] else { return [] }
        var result = [RevID]()
        for leaf in leafIndices {
            var current: Int? = leaf
            while let c = current, nodes[c].revID.generation >= rev.generation {
                if c == target {
                    result.append(nodes[leaf].revID)
                    break
                }
                current = nodes[c].parent
            }
        }
        return result
    }

    /// The latest common ancestor of `revs` (a revision counts as its own
    /// ancestor, so one revision gives itself). Nil if `revs` is empty, any is
    /// unknown, or they do not share a root.
    public func commonAncestor(of revs: [RevID]) -> RevID? {
        commonAncestorIndex(of: revs).map { nodes[$0].revID }
    }

    /// `commonAncestor(of: liveLeaves)` when there are at least two live leaves, else nil.
    public var mergeBase: RevID? {
        mergeBaseIndex.map { nodes[$0].revID }
    }

    var mergeBaseIndex: Int? {
        guard hasConflict else { return nil }
        return commonAncestorIndex(of: liveLeaves)
    }

    func commonAncestorIndex(of revs: [RevID]) -> Int? {
        guard let first = revs.first, let start = indexByRev[first] else { return nil }
        // The chain from the first revision to its root; generations along it are
        // consecutive, so a node's position is known from its generation alone.
        var chain = [Int]()
        var current: Int? = start
        while let c = current {
            chain.append(c)
            current = nodes[c].parent
        }
        let topGeneration = first.generation
        var cut = 0   // position of the deepest-so-far common ancestor on the chain
        for rev in revs.dropFirst() {
            guard var c = indexByRev[rev] else { return nil }
            while true {
                let position = topGeneration - nodes[c].revID.generation
                if position >= chain.count { return nil }   // below the chain's root
                if position >= 0 && chain[position] == c {
                    cut = max(cut, position)
                    break
                }
                guard let p = nodes[c].parent else { return nil }
                c = p
            }
        }
        return chain[cut]
    }
}
