import DocumentModel

/// One revision of a document as read from the store: its ID, deleted flag, body
/// (user properties plus `_attachments` metadata) and the sequence it arrived at.
public struct Revision: Sendable, Equatable {
    public let docID: String
    public let revID: RevID
    public let deleted: Bool
    /// The body, or nil when it has been compacted away or was never received.
    public let body: [String: JSON]?
    public let sequence: UInt64
    /// The revision's version vector (nil when the reader did not read it).
    public let version: VersionVector?

    public init(
        docID: String, revID: RevID, deleted: Bool, body: [String: JSON]?, sequence: UInt64, version: VersionVector? = nil
    ) {
        self.docID = docID
        self.revID = revID
        self.deleted = deleted
        self.body = body
        self.sequence = sequence
        self.version = version
    }

    /// The attachment metadata of this revision, by name.
    public var attachments: [String: AttachmentInfo] {
        AttachmentInfo.parse(body?["_attachments"])
    }
}

/// A document's metadata: its revision tree, current winner and latest sequence.
public struct DocumentMetadata: Sendable, Equatable {
    public let docID: String
    public let tree: RevTree
    public let sequence: UInt64

    public init(docID: String, tree: RevTree, sequence: UInt64) {
        self.docID = docID
        self.tree = tree
        self.sequence = sequence
    }

    /// The winning revision (never nil for a stored document).
    public var winner: RevID { tree.winner! }
    /// True when every leaf is a tombstone.
    public var deleted: Bool { tree.isDeleted }
}

/// What a successful write produced.
public struct WriteResult: Sendable, Equatable {
    public let docID: String
    public let revID: RevID
    /// The sequence assigned, or nil when a `new_edits=false` revision was already known.
    public let sequence: UInt64?
    /// The revision's version vector as stored (nil when the revision was already known
    /// and nothing was stored).
    public let version: VersionVector?

    public init(docID: String, revID: RevID, sequence: UInt64?, version: VersionVector? = nil) {
        self.docID = docID
        self.revID = revID
        self.sequence = sequence
        self.version = version
    }
}

/// A requested change to one document.
public struct DocumentUpdate: Sendable {
    /// How the new revision relates to what the store holds.
    public enum Mode: Sendable {
        /// Normal edit (`new_edits=true`): the new revision is a child of `parent`, which
        /// must be a current leaf (nil creates the document, or recreates a deleted one).
        case edit(parent: RevID?)
        /// Replicated revision (`new_edits=false`): `history[0]` is the revision,
        /// `history[1]` its parent, and so on; divergent histories create conflicts.
        case replicate(history: [RevID])
    }

    public var docID: String
    /// User properties, optionally with `_attachments` (entries with inline base64
    /// `data`, with `stub: true`, or already-resolved metadata with a `digest`).
    /// Parsed from `object` on every read when that holds canonical bytes.
    public var body: [String: JSON] {
        get { object.properties }
        set { object = ObjectBody(newValue) }
    }
    /// `body`, possibly held as the canonical bytes it arrived in: such a body is
    /// stored as is and never parsed on the way (unless a key starts with `_`, which
    /// the store refuses as for a parsed body).
    public var object: ObjectBody
    public var deleted: Bool
    public var mode: Mode
    /// Sync Gateway's no-conflicts mode for a replicated revision (a Couchbase Lite
    /// client's push): refused with `409` when it would start a branch, i.e. when the
    /// nearest ancestor in its history that the store holds is not the current winner
    /// (with no such ancestor, only an absent or deleted document accepts it).
    public var noConflicts: Bool
    /// The revision's version vector as its writer sent it (a Couchbase Lite 4 or Sync
    /// Gateway 4 peer, a mesh link), or nil. Nil gives an `.edit` a new local version and
    /// a `.replicate` its legacy version (`Version.legacy(revID:)`) over its parent's
    /// vector. With a vector, an `.edit` is refused (409) unless the vector dominates its
    /// parent's, and a `.replicate` of a revision already stored reconciles the stored
    /// vector with it (docs/architecture.md §10.9).
    public var version: VersionVector?
    /// The Sync Gateway–style text `version` was parsed from, when the caller has it: stored
    /// as it is when the revision's vector is exactly `version` (no formatting per write).
    public var versionText: String?

    public init(
        docID: String, body: [String: JSON], deleted: Bool = false, mode: Mode, noConflicts: Bool = false,
        version: VersionVector? = nil
    ) {
        self.docID = docID
        self.object = ObjectBody(body)
        self.deleted = deleted
        self.mode = mode
        self.noConflicts = noConflicts
        self.version = version
    }

    /// An update whose body is held as canonical bytes (see `ObjectBody(canonical:)`).
    public init(
        docID: String, object: ObjectBody, deleted: Bool = false, mode: Mode, noConflicts: Bool = false,
        version: VersionVector? = nil
    ) {
        self.docID = docID
        self.object = object
        self.deleted = deleted
        self.mode = mode
        self.noConflicts = noConflicts
        self.version = version
    }
}
