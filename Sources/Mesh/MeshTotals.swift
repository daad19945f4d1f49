import Replication

/// A mesh's counters summed over its peers (for metrics).
public struct MeshTotals: Sendable, Equatable {
    public var connected = 0
    public var pushed = 0
    public var pulled = 0
    public var bytesOut = 0
    public var bytesIn = 0
    public var revisions = RevisionCounts()

    public init() {}
}
