// Stemming: pruning old history down to `revs_limit` generations.

extension RevTree {
    /// Stems every branch to `limit` generations counted from each leaf (the leaf
    /// counts as one; a limit below 1 is treated as 1). Never removes a leaf.
    /// When there is a conflict, also keeps the merge base and every revision
    /// between it and each live leaf, so the merge base stays the common
    /// ancestor of the live leaves. Children of removed revisions become roots.
    /// Returns the removed revisions, in node order.
    @discardableResult
    public mutating func stem(limit: Int) -> [RevID] {
        guard !nodes.isEmpty else { return [] }
        let limit = max(1, limit)
        // budget[i]: the most generations still allowed when reaching node i from some leaf.
        var budget = [Int](repeating: 0, count: nodes.count)
        for leaf in leafIndices {
            var current: Int? = leaf
            var remaining = limit
            while let c = current, remaining > 0, budget[c] < remaining {
                budget[c] = remaining
                remaining -= 1
                current = nodes[c].parent
            }
        }
        if let base = mergeBaseIndex {
            budget[base] = max(budget[base], 1)
            for leaf in leafIndices where !nodes[leaf].deleted {
                var current: Int? = leaf
                while let c = current, c != base {
                    budget[c] = max(budget[c], 1)
                    current = nodes[c].parent
                }
            }
        }
        guard budget.contains(0) else { return [] }

        var newIndex = [Int](repeating: -1, count: nodes.count)
        var kept = [Node]()
        kept.reserveCapacity(nodes.count)
        var removed = [RevID]()
        for (i, node) in nodes.enumerated() {
            guard budget[i] > 0 else {
                removed.append(node.revID)
                continue
            }
            var copy = node
            if let p = node.parent {
                copy.parent = budget[p] > 0 ? newIndex[p] : nil
            }
            newIndex[i] = kept.count
            kept.append(copy)
        }
        replaceNodes(kept)
        return removed
    }
}
