import BLIP

/// How one connection names documents — revision IDs with their trees
/// (`BLIP_3+CBMobile_2`/`_3`) or versions (`BLIP_3+CBMobile_4`) — and the message shapes
/// that follow from it, decided here for the session's roles: what `subChanges` says and
/// accepts, and how a feed offers changes when it serves a peer's pull or pushes. The
/// sender and the receiver then dispatch each message on it (`ChangesSender+Propose`,
/// `RevisionReceiver+Versions`).
enum DocumentNaming: Sendable, Equatable {
    case revisionTrees
    case versionVectors

    init(_ access: PeerAccess) {
        self = access.versionVectors ? .versionVectors : .revisionTrees
    }

    /// The `versioning` property of `subChanges` (couchbase-lite-core's names).
    var subChangesVersioning: String {
        self == .versionVectors ? "version-vectors" : "rev-trees"
    }

    /// The connection's kind, for logs.
    var connectionKind: String {
        self == .versionVectors ? BLIPWebSocket.versionVectorSubprotocol : "revision-tree (CBMobile_3/2)"
    }

    /// A feed serving the peer's `subChanges`: versions name a document's current
    /// revision only, so a version-vector peer is offered winners, as a client is.
    func servingOptions(_ options: inout ChangesSender.Options, noConflicts: Bool) {
        options.versionVectors = self == .versionVectors
        options.winnerOnly = noConflicts || self == .versionVectors
    }

    /// An active push: to a version-vector peer as Couchbase Lite 4 pushes to Sync
    /// Gateway 4 (each winner's current version proposed with `proposeChanges`, then its
    /// vector); to a revision-tree peer every leaf, offered with `changes`.
    func pushOptions(_ options: inout ChangesSender.Options) {
        guard self == .versionVectors else { return }
        options.versionVectors = true
        options.winnerOnly = true
        options.proposes = true
    }
}
