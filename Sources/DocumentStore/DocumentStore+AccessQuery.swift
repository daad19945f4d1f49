import DocumentModel
import Foundation
import GRDB

/// One entry of a user's changes feed: a document visible in the user's channels, or
/// a document that left them (`removed`, as Sync Gateway reports it).
public struct ChannelChange: Sendable {
    public let listing: DocumentListing
    /// The entry's sequence: the document's latest change, or its removal from the
    /// channels in `removed`.
    public let sequence: UInt64
    /// Channels of the user's that the document left (empty for a visible document).
    public let removed: [String]
    /// For a removal: the revision that removed it.
    public let removalRev: RevID?

    public var isRemoval: Bool { !removed.isEmpty }

    init(listing: DocumentListing, sequence: UInt64, removed: [String], removalRev: RevID?) {
        self.listing = listing
        self.sequence = sequence
        self.removed = removed
        self.removalRev = removalRev
    }

    /// A document of the whole database's feed, at its latest change.
    public init(listing: DocumentListing) {
        self.init(listing: listing, sequence: listing.sequence, removed: [], removalRev: nil)
    }
}

/// A grant made by a document's current revision.
public struct ChannelGrant: Sendable, Equatable {
    /// User name or `role:<name>`.
    public let grantee: String
    public let channel: String
    /// The sequence at which the grant took effect.
    public let sequence: UInt64
}

/// A role given to a user by a document's current revision (`role()`).
public struct RoleGrant: Sendable, Equatable {
    public let user: String
    public let role: String
    public let sequence: UInt64
}

extension DocumentStore {
    /// The channels a document is currently in (those of its winning revision); nil
    /// when the document does not exist.
    public func documentChannels(docID: String) async throws(StoreError) -> Set<String>? {
        try await read { db in
            guard let rowID = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM \(Tables.docs) WHERE key = ?"), arguments: [docID]) else {
                return nil
            }
            return try String.fetchSet(
                db.cachedStatement(sql: "SELECT channel FROM \(Tables.docChannels) WHERE doc = ? AND removed = 0"), arguments: [rowID])
        }
    }

    /// What a revision of a document means for access, if it was recorded.
    public func revisionAccess(docID: String, rev: RevID) async throws(StoreError) -> RevisionAccess? {
        try await read { db in
            guard let rowID = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM \(Tables.docs) WHERE key = ?"), arguments: [docID]) else {
                return nil
            }
            return try Self.loadAccess(db, docRow: rowID, rev: rev)
        }
    }

    /// The channel grants (`access()`) made to any of `grantees` by current revisions.
    public func channelGrants(to grantees: [String]) async throws(StoreError) -> [ChannelGrant] {
        guard !grantees.isEmpty else { return [] }
        return try await read { db in
            let sql = "SELECT grantee, channel, MIN(seq) FROM \(Tables.accessGrants) WHERE grantee IN (\(grantees.map { _ in "?" }.joined(separator: ","))) GROUP BY grantee, channel"
            // Cached: a user's pull asks for its grants before every batch.
            return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(grantees)).map {
                ChannelGrant(grantee: $0[0], channel: $0[1], sequence: UInt64($0[2] as Int64))
            }
        }
    }

    /// The roles given to `user` by current revisions (`role()`).
    public func roleGrants(to user: String) async throws(StoreError) -> [RoleGrant] {
        try await read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT user, role, MIN(seq) FROM \(Tables.roleGrants) WHERE user = ? GROUP BY user, role"),
                arguments: [user]
            ).map { RoleGrant(user: $0[0], role: $0[1], sequence: UInt64($0[2] as Int64)) }
        }
    }

    /// The roles `role()` gave `user` in the database's other collections: roles are the
    /// database's (Sync Gateway 3), whichever collection's sync function granted them.
    public func roleGrantsInOtherCollections(to user: String) async throws(StoreError) -> Set<String> {
        let own = tableSet
        return try await read { db in
            var roles = Set<String>()
            for tables in try Self.allTableSets(db) where tables != own {
                try Tables.with(tables) {
                    let sql = "SELECT DISTINCT role FROM \(Tables.roleGrants) WHERE user = ?"
                    for row in try Row.fetchAll(db.cachedStatement(sql: sql), arguments: [user]) { roles.insert(row[0]) }
                }
            }
            return roles
        }
    }

    /// The grants a document's current revision makes, and its channels: for
    /// `_all_docs?channels=true&access=true`.
    public func currentAccess(docIDs: [String]) async throws(StoreError) -> [String: RevisionAccess] {
        try await read { db in
            var result: [String: RevisionAccess] = [:]
            let statement = try db.cachedStatement(sql: """
                SELECT a.data FROM \(Tables.docs) d JOIN \(Tables.revAccess) a ON a.doc = d.id AND a.rev = d.winner WHERE d.key = ?
                """)
            for key in docIDs {
                if let data = try Data.fetchOne(statement, arguments: [key]) {
                    result[key] = RevisionAccess(json: (try? JSON.parse([UInt8](data))) ?? .null)
                }
            }
            return result
        }
    }

    /// A user's changes feed: documents in `channels` (channel → the sequence at which
    /// the user got it) changed after `since`, plus every document of a channel granted
    /// after `since` (a backfill), plus documents that left those channels after
    /// `since`. Each document once, at its latest visible change, in sequence order.
    /// `activeOnly` leaves out deleted documents and removals, those at or before
    /// `activeOnlyThrough` only (a replication's feed sends what happens after it started).
    public func changes(
        since: UInt64, channels: [String: UInt64], limit: Int? = nil, activeOnly: Bool = false,
        activeOnlyThrough: UInt64 = .max, includeBodies: Bool = false
    ) async throws(StoreError) -> [ChannelChange] {
        try await read(bounded: limit != nil) { db in
            let sql = """
                SELECT d.key, d.seq, d.tree, \(includeBodies ? "d.body" : "NULL"), c.seq, c.rev, c.removed
                FROM \(Tables.docChannels) c JOIN \(Tables.docs) d ON d.id = c.doc
                WHERE c.channel = ? AND c.seq > ? ORDER BY c.seq\(limit.map { " LIMIT \(max(0, $0))" } ?? "")
                """
            let statement = try db.cachedStatement(sql: sql)
            var visible: [String: DocumentListing] = [:]
            var removals: [String: (listing: DocumentListing, seq: UInt64, rev: String, channels: [String])] = [:]
            for (channel, granted) in channels {
                let from = granted > since ? 0 : since
                for row in try Row.fetchAll(statement, arguments: [channel, Int64(clamping: from)]) {
                    let removed: Bool = row[6]
                    let seq = UInt64(row[4] as Int64)
                    if removed {
                        guard seq > since else { continue }
                        let listing = try Self.listing(row)
                        var entry = removals[listing.docID] ?? (listing, 0, "", [])
                        entry.channels.append(channel)
                        if seq > entry.seq { (entry.seq, entry.rev) = (seq, row[5]) }
                        removals[listing.docID] = entry
                    } else if visible[row[0]] == nil {
                        visible[row[0]] = try Self.listing(row)
                    }
                }
            }
            var result: [ChannelChange] = []
            for listing in visible.values where !(activeOnly && listing.deleted && listing.sequence <= activeOnlyThrough) {
                result.append(ChannelChange(listing: listing, sequence: listing.sequence, removed: [], removalRev: nil))
            }
            for (docID, removal) in removals where visible[docID] == nil && !(activeOnly && removal.seq <= activeOnlyThrough) {
                result.append(ChannelChange(
                    listing: removal.listing, sequence: removal.seq, removed: removal.channels.sorted(),
                    removalRev: RevID(removal.rev)))
            }
            result.sort { $0.sequence == $1.sequence ? $0.listing.docID < $1.listing.docID : $0.sequence < $1.sequence }
            if let limit, result.count > limit { result.removeLast(result.count - limit) }
            return result
        }
    }

    /// Documents currently in one of `lost` and in none of `kept`: what a reader who
    /// lost the channels `lost` (and still reads `kept`) can no longer see.
    public func documents(onlyIn lost: Set<String>, notIn kept: Set<String>) async throws(StoreError) -> [DocumentListing] {
        guard !lost.isEmpty else { return [] }
        return try await scan { db in
            let lostMarks = lost.map { _ in "?" }.joined(separator: ",")
            let keptClause = kept.isEmpty ? "" : """
                 AND NOT EXISTS (SELECT 1 FROM \(Tables.docChannels) k WHERE k.doc = d.id AND k.removed = 0
                 AND k.channel IN (\(kept.map { _ in "?" }.joined(separator: ","))))
                """
            let sql = """
                SELECT d.key, d.seq, d.tree, NULL FROM \(Tables.docs) d WHERE EXISTS (SELECT 1 FROM \(Tables.docChannels) c
                WHERE c.doc = d.id AND c.removed = 0 AND c.channel IN (\(lostMarks)))\(keptClause) ORDER BY d.seq
                """
            let arguments = StatementArguments(lost.sorted() + kept.sorted())
            return try Row.fetchAll(db.makeStatement(sql: sql), arguments: arguments).map(Self.listing)
        }
    }
}
