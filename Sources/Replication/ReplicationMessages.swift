import BLIP
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DocumentModel
import DocumentStore

/// The replication protocol's message names and encodings (Couchbase Lite's
/// replication protocol over BLIP; see Replication.md next to this file).
enum ReplicationMessages {
    static let getCheckpoint = "getCheckpoint"
    static let setCheckpoint = "setCheckpoint"
    static let subChanges = "subChanges"
    static let changes = "changes"
    static let proposeChanges = "proposeChanges"
    static let rev = "rev"
    static let norev = "norev"
    static let getAttachment = "getAttachment"
    static let proveAttachment = "proveAttachment"
    static let getCollections = "getCollections"

    /// Error domain for HTTP-like statuses in replication replies, as Sync Gateway uses.
    static let httpDomain = "HTTP"

    /// A `changes` request with `body`. In order (BLIP `inOrder`): the peer handles
    /// `changes` in arrival order and tracks checkpoints in that order, so a short batch
    /// (or the empty "caught up" one) must not overtake a long one queued before it.
    static func changesRequest(body: [UInt8]) -> BLIPMessage {
        var message = BLIPMessage(profile: changes, body: body)
        message.inOrder = true
        return message
    }

    /// One `changes` entry, `[sequence, docID, revID, flags?]`. The fourth item is a
    /// boolean (deleted) for Sync Gateway 2 and Couchbase Lite, and a number of flags
    /// for Sync Gateway 3: 1 deleted, 2 the user lost access to the document's
    /// channel, 4 the document left the user's channels (5, a tombstone that left a
    /// channel, counts as a plain tombstone). An entry that says access was lost asks
    /// for nothing: it tells the puller it may purge its copy.
    struct ChangeEntry: Sendable, Equatable {
        var sequence: JSON
        var docID: String
        var revID: RevID
        var flags: Int
        /// The revision's current version, offered instead of `revID` to a peer that
        /// names revisions by versions (CBMobile_4).
        var version: String?
        /// The stored vector of the winner offered, for Shoal peers (carried beside the
        /// rows, in the message's `shoal-vvs` property: `rowVectors`). A node that has the
        /// revision reconciles its vector with it (`DocumentStore.reconcileVectors`).
        var vector: OfferedVector = .unknown

        static let deletedFlag = 1
        static let revokedFlag = 2
        static let removedFlag = 4

        var deleted: Bool { flags & Self.deletedFlag != 0 }
        /// Access lost (revoked, or removed from the channels) and not a tombstone.
        var lostAccess: Bool { Self.saysLostAccess(flags) }

        static func saysLostAccess(_ flags: Int) -> Bool {
            flags & (revokedFlag | removedFlag) != 0 && flags != removedFlag | deletedFlag
        }

        /// The flags item (the fourth) of an entry: a boolean (deleted) or a number.
        static func flags(_ items: [JSON]) -> Int {
            guard items.count > 3 else { return 0 }
            if let bool = items[3].boolValue { return bool ? deletedFlag : 0 }
            return Int(clamping: max(0, min(items[3].intValue ?? 0, 7)))
        }

        var json: JSON {
            var items: [JSON] = [sequence, .string(docID), .string(version ?? revID.description)]
            if flags == Self.deletedFlag { items.append(true) } else if flags != 0 { items.append(.int(Int64(flags))) }
            return .array(items)
        }

        init(sequence: JSON, docID: String, revID: RevID, deleted: Bool) {
            self.init(sequence: sequence, docID: docID, revID: revID, flags: deleted ? Self.deletedFlag : 0)
        }

        init(sequence: JSON, docID: String, revID: RevID, flags: Int) {
            self.sequence = sequence
            self.docID = docID
            self.revID = revID
            self.flags = flags
        }

        /// Parses an entry; nil when malformed.
        init?(_ json: JSON) {
            guard let items = json.arrayValue, items.count >= 3, let docID = items[1].stringValue,
                  let revString = items[2].stringValue, let revID = RevID(revString)
            else { return nil }
            sequence = items[0]
            self.docID = docID
            self.revID = revID
            flags = Self.flags(items)
        }
    }

    /// A `changes` property Shoal adds for its own peers (`PeerDialect.carriesShoalVectors`):
    /// the stored vectors of the winners its rows offer, a JSON array with one item per
    /// row — the vector's text, `""` for a revision's legacy version alone, `null` for a
    /// row without — trailing nulls dropped. Others never get it.
    static let rowVectorsProperty = "shoal-vvs"

    /// The `shoal-vvs` value for `entries` (nil when no row has a vector).
    static func rowVectors(_ entries: [ChangeEntry]) -> String? {
        var items: [JSON] = entries.map { entry in
            if case .stored(let text) = entry.vector { return .string(text ?? "") }
            return .null
        }
        while items.last == .null { items.removeLast() }
        return items.isEmpty ? nil : JSON.array(items).canonicalString
    }

    /// Gives `entries` the vectors a `shoal-vvs` value names. A value that is not such a
    /// list (or longer than the rows) is a 400.
    static func applyRowVectors(_ value: String?, to entries: inout [ChangeEntry]) throws(BLIPError) {
        guard let value else { return }
        guard let items = (try? JSON.parse(value))?.arrayValue, items.count <= entries.count else {
            throw error(400, "\(rowVectorsProperty) must be a list of vectors, one per row")
        }
        for (index, item) in items.enumerated() {
            switch item {
            case .null: continue
            case .string(let text): entries[index].vector = .stored(text.isEmpty ? nil : text)
            default: throw error(400, "\(rowVectorsProperty) must be a list of vectors, one per row")
            }
        }
    }

    static func parseJSONBody(_ message: BLIPMessage) throws(BLIPError) -> JSON {
        guard !message.body.isEmpty else { return .null }
        do {
            return try JSON.parse(message.body)
        } catch {
            throw BLIPError(domain: httpDomain, code: 400, message: "Invalid JSON body: \(error)")
        }
    }

    /// `proveAttachment`'s answer: `sha1-<base64>` of (the nonce's length as one byte,
    /// the nonce, the attachment's bytes).
    static func attachmentProof(nonce: [UInt8], data: [UInt8]) -> String {
        var sha = CryptoSHA1()
        sha.update(byte: UInt8(truncatingIfNeeded: nonce.count))
        nonce.withUnsafeBytes { sha.update($0) }
        data.withUnsafeBytes { sha.update($0) }
        return Digests.attachmentDigest(sha1: sha.finalize())
    }

    /// A `rev` property Shoal adds for its own peers on revision-tree connections: the
    /// revision's whole version vector (Sync Gateway's text form), so that a revision has
    /// the same vector on every node (docs/architecture.md §10.9). Others ignore it.
    static let versionVectorProperty = "shoal-vv"

    static func error(_ code: Int, _ message: String) -> BLIPError {
        BLIPError(domain: httpDomain, code: code, message: message)
    }

    /// A store failure as a BLIP error (HTTP domain, matching status).
    static func error(_ error: StoreError) -> BLIPError {
        BLIPError(domain: httpDomain, code: error.httpStatus, message: error.reason)
    }

    /// The `rev` body for a stored revision: the stored bytes as they are, unless
    /// the revision has attachments (then they are marked as stubs). Nil when the
    /// stored body cannot be read.
    static func outgoingBody(_ revision: OutgoingRevision) -> [UInt8]? {
        // Canonical JSON escapes no ASCII letter, so an `_attachments` key is always
        // spelled out in the stored bytes.
        guard revision.bodyBytes.containsSubsequence(attachmentsKey) else { return revision.bodyBytes }
        guard let body = try? revision.body() else { return nil }
        return JSON.object(outgoingBody(body)).canonicalBytes()
    }

    private static let attachmentsKey = Array(#""_attachments":"#.utf8)

    /// The `_attachments` of a stored body as sent in a `rev`: metadata with `stub: true`.
    static func outgoingBody(_ body: [String: JSON]) -> [String: JSON] {
        guard let attachments = body["_attachments"]?.objectValue else { return body }
        var result = body
        var stubs: [String: JSON] = [:]
        for (name, entry) in attachments {
            guard var fields = entry.objectValue else { continue }
            fields["stub"] = true
            stubs[name] = .object(fields)
        }
        result["_attachments"] = .object(stubs)
        return result
    }
}

extension Array where Element == UInt8 {
    /// True when `needle` occurs in these bytes: `memchr` for its first byte that is
    /// not a quote (a JSON body is full of quotes, which would stop the search at every
    /// string), then `memcmp` of the whole needle.
    func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard needle.count <= count else { return false }
        let anchor = needle.firstIndex { $0 != UInt8(ascii: "\"") } ?? 0
        return withUnsafeBufferPointer { haystack in
            needle.withUnsafeBufferPointer { needle in
                guard let base = haystack.baseAddress, let pattern = needle.baseAddress else { return false }
                // Candidate starts are 0...last; the anchor byte of a candidate is at start + anchor.
                var start = 0
                let last = haystack.count - needle.count
                while start <= last {
                    guard let found = memchr(base + start + anchor, Int32(needle[anchor]), last - start + 1) else { return false }
                    let position = base.distance(to: found.assumingMemoryBound(to: UInt8.self)) - anchor
                    if memcmp(base + position, pattern, needle.count) == 0 { return true }
                    start = position + 1
                }
                return false
            }
        }
    }
}
