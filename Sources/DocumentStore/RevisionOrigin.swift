/// Where a revision came from, as this node saw it: written through this node's API
/// (`local`), by this node's conflict resolver (`resolver`), or received from another
/// node or client by replication (`peer`).
///
/// Origins are node-local facts, never part of a revision: revision IDs and bodies stay
/// the same on every node (ARCHITECTURE.md §4), and an origin is neither replicated
/// nor hashed. Two nodes that resolve the same conflict write the same revisions; each
/// records its own resolver only when its resolution was the first copy it stored.
/// The store records one origin per committed change, keyed by the local sequences
/// the change was given (`rev_origins`, docs/storage.md); `origins(of:)` reads them back.
public struct RevisionOrigin: Sendable, Equatable {
    /// Who wrote the revision here.
    public enum Kind: String, Sendable, CaseIterable {
        /// Written through this node's REST API (a client, an administrator, a bulk load).
        case local
        /// Written by this node's conflict resolver (automatic, or `_resolve`).
        case resolver
        /// Received by replication.
        case peer
    }

    public var kind: Kind
    /// The node that wrote it: this node for `resolver` (and `local` when known), the
    /// peer's node ID for `peer` when the peer is a mesh node, else nil.
    public var node: String?
    /// More about it: the policy for `resolver` (e.g. `merge`, `winner`), the remote URL
    /// of a replication this node dialed, or the user a client replicated as.
    public var detail: String?

    public init(kind: Kind, node: String? = nil, detail: String? = nil) {
        self.kind = kind
        self.node = node
        self.detail = detail
    }

    /// A write through this node's API.
    public static let local = RevisionOrigin(kind: .local)

    /// A resolution written by the resolver of node `node`.
    public static func resolver(node: String?, detail: String? = nil) -> RevisionOrigin {
        RevisionOrigin(kind: .resolver, node: node, detail: detail)
    }

    /// A revision received from `node` (nil: a peer that is not a mesh node).
    public static func peer(node: String?, detail: String? = nil) -> RevisionOrigin {
        RevisionOrigin(kind: .peer, node: node, detail: detail)
    }
}
