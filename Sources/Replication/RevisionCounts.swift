import DocumentModel

/// What one link (or a whole database's links) did with revisions, each way: how many it
/// offered the peer and how many of those the peer already held, how many it left out
/// because the peer holds them (`MeshKnowledge`), and of the peer's offers how many it
/// asked for, received and stored. In a mesh that offers each revision about once,
/// `offeredHeld` stays near 0 and `stored` near `received`.
public struct RevisionCounts: Sendable, Equatable {
    /// Revisions offered to the peer (`changes`, `proposeChanges` rows).
    public var offered = 0
    /// Offered revisions the peer answered it did not need.
    public var offeredHeld = 0
    /// Revisions not offered because the peer holds them (it sent them, or covers their source).
    public var notOffered = 0
    /// The peer's offered revisions we asked for.
    public var asked = 0
    /// `rev`s received from the peer.
    public var received = 0
    /// Received revisions stored here (new to this database).
    public var stored = 0

    public init() {}

    public static func + (left: RevisionCounts, right: RevisionCounts) -> RevisionCounts {
        var sum = left
        sum.offered += right.offered
        sum.offeredHeld += right.offeredHeld
        sum.notOffered += right.notOffered
        sum.asked += right.asked
        sum.received += right.received
        sum.stored += right.stored
        return sum
    }

    /// `_peers`' `revisions` object.
    public var json: JSON {
        [
            "offered": .int(Int64(offered)), "offered_held": .int(Int64(offeredHeld)),
            "not_offered": .int(Int64(notOffered)), "asked": .int(Int64(asked)),
            "received": .int(Int64(received)), "stored": .int(Int64(stored)),
        ]
    }
}
