import BLIP

extension ProtocolVersion {
    /// Documents are named by versions (version vectors) on the wire instead of revision
    /// IDs: `changes`, `proposeChanges` and `rev` carry current versions (CBMobile_4).
    public var namesByVersions: Bool { self >= .cbMobile4 }

    /// The `versioning` property of `subChanges` on this version (couchbase-lite-core's
    /// names), also a replication's `"versioning"`.
    var subChangesVersioning: String { namesByVersions ? "version-vectors" : "rev-trees" }

    /// A replication's `"versioning"`: the newest version its dial offers.
    init?(versioning: String) {
        switch versioning {
        case "rev-trees": self = .cbMobile3
        case "version-vectors": self = .cbMobile4
        default: return nil
        }
    }
}

/// How the peer of one session speaks, decided once when the connection starts: the
/// protocol version its connection negotiated and who the peer is. Every difference in
/// what the session sends and accepts is one of the named predicates below, which the
/// sender and the receiver ask (and dispatch on to their `+Propose`/`+Versions` files).
/// What Shoal nodes add to Couchbase Lite's protocol travels in named properties
/// (`shoal-vv`, `shoal-vvs`) and messages (`shoal/covered`, `shoal/meshPeers`), which
/// other peers never get.
public struct PeerDialect: Sendable, Equatable, CustomStringConvertible {
    /// Who the peer is.
    public enum Peer: String, Sendable, Equatable {
        /// A Shoal node: a mesh peer, or Shoal's own replicator.
        case shoal
        /// Another replication server (a named replication's remote, e.g. Sync Gateway).
        case server
        /// A client in Sync Gateway's no-conflicts mode (Couchbase Lite, anything that
        /// is neither a mesh peer nor Shoal's replicator).
        case client
    }

    public var version: ProtocolVersion
    public var peer: Peer
    /// This side dialed as a Couchbase Lite client would (`ReplicationConfiguration.asClient`):
    /// the peer serves it in no-conflicts mode.
    public var actsAsClient = false

    public init(version: ProtocolVersion = .default, peer: Peer = .shoal) {
        self.version = version
        self.peer = peer
    }

    /// The dialect of a connection whose subprotocol is `subprotocol` (nil or unknown:
    /// the default version).
    public init(subprotocol: String?, peer: Peer) {
        self.init(version: subprotocol.flatMap(ProtocolVersion.init(subprotocol:)) ?? .default, peer: peer)
    }

    /// Versions name documents on the wire (CBMobile_4).
    public var namesByVersions: Bool { version.namesByVersions }

    /// Sync Gateway's no-conflicts mode: a pushed revision that would start a branch is
    /// refused with 409, and `changes` (rather than `proposeChanges`) is refused.
    public var refusesBranches: Bool { peer == .client }

    /// The peer is offered each document's winner only, never a losing branch: a client
    /// (no-conflicts mode), and any peer that names documents by versions (a version names
    /// a document's current revision only).
    public var offersWinnersOnly: Bool { peer == .client || namesByVersions }

    /// A push offers with `proposeChanges` (each winner's current version), as Couchbase
    /// Lite 4 pushes to Sync Gateway 4, and as a client pushes over revision trees
    /// (Couchbase Lite 3: couchbase-lite-core's Pusher proposes unless conflicts are
    /// allowed, and Sync Gateway refuses `changes` from a client); else with `changes`.
    public var proposesOnPush: Bool { namesByVersions || actsAsClient }

    /// Revision-tree rows and `rev`s carry Shoal's vectors (`shoal-vvs`, `shoal-vv`), so a
    /// revision has the same vector on every node (docs/architecture.md §10.9).
    public var carriesShoalVectors: Bool { peer != .client && !namesByVersions }

    /// The peer takes part in the mesh's knowledge of who holds what (`shoal/covered`,
    /// docs/architecture.md §10.10), given it reads everything.
    public var exchangesCoverage: Bool { peer == .shoal && !namesByVersions }

    /// For logs: the subprotocol, and the peer when it is not a Shoal node.
    public var description: String { peer == .shoal ? version.subprotocol : "\(version.subprotocol) (\(peer.rawValue))" }
}
