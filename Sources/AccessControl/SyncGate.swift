import DocumentModel
import DocumentStore

/// The `RevisionGate` of a database with access control: runs the sync function on
/// every new revision, whatever its source, so that a rejected revision is stored (and
/// therefore replicated) nowhere.
///
/// The function sees the revision as Sync Gateway shows it (`_id`, `_rev`, `_deleted`
/// for deletions, `_attachments`) and the *parent* revision as `oldDoc`. Using the parent
/// rather than whatever revision happens to be current keeps the outcome a function of
/// the revision alone, so every node of a mesh computes the same channels and grants
/// for it whatever order revisions arrive in. The writer is the `author` the store was
/// given: a `SyncUser`, or nil for administrators and mesh peers (`require…` pass).
///
/// Without a configured function the gate applies Sync Gateway's default,
/// `function(doc, oldDoc) { channel(doc.channels); }`, natively: the same channels,
/// without a JavaScript call per revision.
public struct SyncGate: RevisionGate {
    /// The configured function; nil for the default routing.
    public let function: SyncFunction?

    public init(function: SyncFunction?) {
        self.function = function
    }

    /// Only a configured function sees `oldDoc`; the default routing reads `doc` alone.
    public var readsParentBody: Bool { function != nil }

    public func evaluate(_ revision: GateRevision, author: (any Sendable)?) throws(StoreError) -> RevisionAccess {
        guard let function else {
            // The default function: `channel(doc.channels)`; a deletion has no properties.
            let value = revision.object["channels"] ?? .null
            return RevisionAccess(channels: Set(ChannelSet.strings(value).filter(ChannelSet.isValidChannelName)))
        }
        let (doc, oldDoc) = Self.arguments(revision)
        return try function.run(doc: doc, oldDoc: oldDoc, user: author as? SyncUser)
    }

    public func evaluate(batch: [GateRevision], author: (any Sendable)?) async -> [Result<RevisionAccess, StoreError>] {
        guard let function else {
            return batch.map { revision in Result { () throws(StoreError) in try evaluate(revision, author: author) } }
        }
        return await function.run(batch: batch.map(Self.arguments), user: author as? SyncUser)
    }

    /// `doc` and `oldDoc` as Sync Gateway shows them to the function.
    static func arguments(_ revision: GateRevision) -> (doc: JSON, oldDoc: JSON?) {
        var doc = revision.body
        doc["_id"] = .string(revision.docID)
        doc["_rev"] = .string(revision.revID.description)
        if revision.deleted { doc["_deleted"] = true }
        var oldDoc: JSON?
        if var parent = revision.parentBody {
            parent["_id"] = .string(revision.docID)
            if revision.parentDeleted { parent["_deleted"] = true }
            oldDoc = .object(parent)
        }
        return (.object(doc), oldDoc)
    }
}
