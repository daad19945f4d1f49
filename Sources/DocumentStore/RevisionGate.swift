import DocumentModel

/// Decides, inside the write transaction, whether a new revision may be stored and
/// what it means for access: its channels and the grants it makes.
///
/// The store knows nothing of users or JavaScript: the AccessControl module implements
/// this protocol with the database's sync function (ARCHITECTURE.md §6). A gate runs for
/// every new revision from any source (REST, `_bulk_docs`, replication, conflict
/// resolution); throwing rejects that revision only, and it is stored nowhere.
public protocol RevisionGate: Sendable {
    /// Whether the gate looks at the parent revision (`GateRevision.parentBody`). A gate
    /// that does not (e.g. Sync Gateway's default routing) is cheap: it is evaluated in
    /// the transaction, and no parent body is read for it.
    var readsParentBody: Bool { get }

    /// Evaluates one new revision. `author` is the opaque writer identity given to
    /// `save(batch:author:)` (nil: an administrator or the mesh, for whom `require…`
    /// checks pass). Throw a `StoreError` (`.forbidden`, `.unauthorized`, or
    /// `.unavailable` when the gate cannot run) to reject.
    func evaluate(_ revision: GateRevision, author: (any Sendable)?) throws(StoreError) -> RevisionAccess

    /// Evaluates many revisions at once (before their transaction; a gate that crosses
    /// threads should do it in one hand-off). One result per revision, in order.
    func evaluate(batch: [GateRevision], author: (any Sendable)?) async -> [Result<RevisionAccess, StoreError>]
}

extension RevisionGate {
    public var readsParentBody: Bool { true }

    public func evaluate(batch: [GateRevision], author: (any Sendable)?) async -> [Result<RevisionAccess, StoreError>] {
        batch.map { revision in Result { () throws(StoreError) in try evaluate(revision, author: author) } }
    }
}

/// A new revision as a gate sees it.
public struct GateRevision: Sendable {
    public let docID: String
    public let revID: RevID
    /// The body as stored: user properties and `_attachments` (no other `_` keys);
    /// parsed on every read when held as canonical bytes: read `object` for one property.
    public var body: [String: JSON] { object.properties }
    /// The body, possibly held as canonical bytes.
    public let object: ObjectBody
    public let deleted: Bool
    /// The parent revision's body (nil for a new document or when the parent's body
    /// is not stored here), and whether that parent is a tombstone.
    public let parentBody: [String: JSON]?
    public let parentDeleted: Bool

    public init(docID: String, revID: RevID, body: [String: JSON], deleted: Bool, parentBody: [String: JSON]?, parentDeleted: Bool) {
        self.init(docID: docID, revID: revID, object: ObjectBody(body), deleted: deleted, parentBody: parentBody,
                  parentDeleted: parentDeleted)
    }

    public init(docID: String, revID: RevID, object: ObjectBody, deleted: Bool, parentBody: [String: JSON]?, parentDeleted: Bool) {
        self.docID = docID
        self.revID = revID
        self.object = object
        self.deleted = deleted
        self.parentBody = parentBody
        self.parentDeleted = parentDeleted
    }
}

/// What a revision means for access control: the channels it is in, and the grants
/// it makes (`access()` of channels to users and `role:` names, `role()` of roles to
/// users). Kept per revision; the document's current (winning) revision's access is
/// the one in effect, so a grant disappears when its document changes or is deleted.
public struct RevisionAccess: Sendable, Equatable {
    public var channels: Set<String>
    /// Grantee (user name, or `role:<name>`) → channels.
    public var access: [String: Set<String>]
    /// User name → roles.
    public var roles: [String: Set<String>]
    /// Expiry from `expiry()`, as given (seconds or an ISO-8601 date), if any.
    public var expiry: JSON?

    public init(channels: Set<String> = [], access: [String: Set<String>] = [:], roles: [String: Set<String>] = [:], expiry: JSON? = nil) {
        self.channels = channels
        self.access = access
        self.roles = roles
        self.expiry = expiry
    }

    /// No channels, grants, roles or expiry.
    public var isEmpty: Bool { channels.isEmpty && access.isEmpty && roles.isEmpty && expiry == nil }

    /// Compact JSON form stored with the revision.
    public var json: JSON {
        func sorted(_ set: Set<String>) -> JSON { .array(set.sorted().map { .string($0) }) }
        var object: [String: JSON] = ["channels": sorted(channels)]
        if !access.isEmpty { object["access"] = .object(access.mapValues(sorted)) }
        if !roles.isEmpty { object["roles"] = .object(roles.mapValues(sorted)) }
        if let expiry { object["expiry"] = expiry }
        return .object(object)
    }

    /// Parses the stored form (unknown or malformed parts are ignored).
    public init(json: JSON) {
        func strings(_ value: JSON?) -> Set<String> {
            Set(value?.arrayValue?.compactMap(\.stringValue) ?? [])
        }
        channels = strings(json["channels"])
        access = (json["access"]?.objectValue ?? [:]).mapValues(strings)
        roles = (json["roles"]?.objectValue ?? [:]).mapValues(strings)
        expiry = json["expiry"]
    }
}
