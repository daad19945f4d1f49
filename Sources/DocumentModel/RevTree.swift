/// The revision tree of one document: every known revision, its parent, deleted
/// flag, whether its body is stored, and the local sequence at which it arrived.
///
/// Nodes are kept in arrival order, and a parent always comes before its
/// children. Every child's generation is its parent's plus one; a root may have
/// any generation ≥ 1 only when it comes from a stemmed history.
/// Leaves are maintained incrementally in winner order, so `winner`, `leaves`
/// and conflict checks cost O(number of leaves), not O(number of nodes).
public struct RevTree: Sendable, Equatable {
    /// One revision in the tree.
    public struct Node: Sendable, Equatable {
        public let revID: RevID
        /// Index of the parent in `nodes`, or nil for a root.
        public internal(set) var parent: Int?
        public var deleted: Bool
        public var hasBody: Bool
        public var sequence: UInt64
    }

    /// Every revision, in arrival order (parents before children).
    public private(set) var nodes: [Node] = []
    /// Position of each revision in `nodes`.
    var indexByRev: [RevID: Int] = [:]
    /// Number of children of each node.
    var childCounts: [Int32] = []
    /// Indices of the leaves, best first in winner order.
    var leafIndices: [Int] = []

    public init() {}

    public static func == (a: RevTree, b: RevTree) -> Bool {
        a.nodes == b.nodes
    }

    public var isEmpty: Bool { nodes.isEmpty }

    /// Number of revisions in the tree.
    public var count: Int { nodes.count }

    public func index(of rev: RevID) -> Int? { indexByRev[rev] }

    public func contains(_ rev: RevID) -> Bool { indexByRev[rev] != nil }

    public func node(for rev: RevID) -> Node? {
        indexByRev[rev].map { nodes[$0] }
    }

    public func parent(of rev: RevID) -> RevID? {
        guard let i = indexByRev[rev], let p = nodes[i].parent else { return nil }
        return nodes[p].revID
    }

    /// The revisions whose parent is `rev`, in arrival order.
    public func children(of rev: RevID) -> [RevID] {
        guard let i = indexByRev[rev], childCounts[i] > 0 else { return [] }
        return nodes[(i + 1)...].filter { $0.parent == i }.map(\.revID)
    }

    /// Winner order: true if `a` ranks before (beats) `b`. A live revision beats
    /// a deleted one; then the higher generation; then the greater digest bytes.
    public static func winnerOrder(_ a: (rev: RevID, deleted: Bool), _ b: (rev: RevID, deleted: Bool)) -> Bool {
        if a.deleted != b.deleted { return !a.deleted }
        return b.rev < a.rev
    }

    /// Adds `rev` as a child of `parent`, or as a new root when `parent` is nil
    /// (then `rev` must be generation 1). Throws if `rev` already exists, the
    /// parent is unknown, or `rev` is not exactly one generation after its parent.
    public mutating func insert(_ rev: RevID, parent: RevID?, deleted: Bool, hasBody: Bool,
                                sequence: UInt64) throws(RevTreeError) {
        guard indexByRev[rev] == nil else { throw .duplicate(rev) }
        var parentIndex: Int?
        if let parent {
            guard let p = indexByRev[parent] else { throw .unknownParent(parent) }
            guard parent.generation &+ 1 == rev.generation else {
                throw .invalidHistory("\(rev) cannot be a child of \(parent)")
            }
            parentIndex = p
        } else if rev.generation != 1 {
            throw .invalidHistory("root revision \(rev) must be generation 1")
        }
        append(rev, parent: parentIndex, deleted: deleted, hasBody: hasBody, sequence: sequence)
    }

    /// Records whether the body of `rev` is stored; no effect if `rev` is unknown.
    public mutating func setHasBody(_ rev: RevID, _ value: Bool) {
        guard let i = indexByRev[rev] else { return }
        nodes[i].hasBody = value
    }

    /// Marks `rev` deleted or live (e.g. when a stored revision is corrected);
    /// keeps the winner order of the leaves. No effect if `rev` is unknown.
    public mutating func setDeleted(_ rev: RevID, _ value: Bool) {
        guard let i = indexByRev[rev], nodes[i].deleted != value else { return }
        nodes[i].deleted = value
        if childCounts[i] == 0 {
            leafIndices.removeAll { $0 == i }
            insertLeaf(i)
        }
    }

    // MARK: - Internal bookkeeping

    /// Appends a node whose parent (if any) is already present; no validation.
    mutating func append(_ rev: RevID, parent: Int?, deleted: Bool, hasBody: Bool, sequence: UInt64) {
        let i = nodes.count
        nodes.append(Node(revID: rev, parent: parent, deleted: deleted, hasBody: hasBody, sequence: sequence))
        indexByRev[rev] = i
        childCounts.append(0)
        if let p = parent {
            if childCounts[p] == 0, let at = leafIndices.firstIndex(of: p) {
                leafIndices.remove(at: at)
            }
            childCounts[p] += 1
        }
        insertLeaf(i)
    }

    /// Inserts leaf `i` into `leafIndices` at its winner-order position.
    mutating func insertLeaf(_ i: Int) {
        let key = (rev: nodes[i].revID, deleted: nodes[i].deleted)
        var at = leafIndices.count
        while at > 0 {
            let other = nodes[leafIndices[at - 1]]
            if RevTree.winnerOrder((other.revID, other.deleted), key) { break }
            at -= 1
        }
        leafIndices.insert(i, at: at)
    }

    /// Recomputes the index, child counts and leaves from `nodes`; returns a
    /// revision that occurs twice, if any (the tree is then inconsistent).
    @discardableResult
    mutating func rebuildDerived() -> RevID? {
        var duplicate: RevID?
        indexByRev = Dictionary(minimumCapacity: nodes.count)
        childCounts = [Int32](repeating: 0, count: nodes.count)
        for (i, node) in nodes.enumerated() {
            if indexByRev.updateValue(i, forKey: node.revID) != nil { duplicate = node.revID }
            if let p = node.parent { childCounts[p] += 1 }
        }
        leafIndices = nodes.indices.filter { childCounts[$0] == 0 }
        leafIndices.sort { RevTree.winnerOrder((nodes[$0].revID, nodes[$0].deleted), (nodes[$1].revID, nodes[$1].deleted)) }
        return duplicate
    }

    /// Replaces the nodes wholesale (parents must precede children); returns a
    /// duplicated revision, if any.
    @discardableResult
    mutating func replaceNodes(_ newNodes: [Node]) -> RevID? {
        nodes = newNodes
        return rebuildDerived()
    }
}
