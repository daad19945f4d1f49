import DocumentModel
import Foundation
import GRDB

/// The write side of access control: running the `RevisionGate` on each new revision
/// and keeping the channel and grant index of each document's winning revision.
extension DocumentStore {
    /// Installs (or removes, with nil) the gate every new revision passes through.
    public func setGate(_ gate: (any RevisionGate)?) {
        gateBox.withLock { $0 = gate }
    }

    /// The installed gate, if any.
    public var gate: (any RevisionGate)? { gateBox.withLock { $0 } }

    /// Runs the gate on a new revision (before anything of it is written).
    static func evaluateGate(
        _ context: WriteContext, docID: String, revID: RevID, body: ObjectBody, deleted: Bool,
        parentBody: [String: JSON]?, parentDeleted: Bool
    ) throws(StoreError) -> RevisionAccess? {
        guard let gate = context.gate else { return nil }
        return try gate.evaluate(
            GateRevision(docID: docID, revID: revID, object: body, deleted: deleted, parentBody: parentBody, parentDeleted: parentDeleted),
            author: context.author)
    }

    /// Records a new revision's access and, when the document's winner is known, the
    /// winner's channels and grants. `access` is the new revision's; `winner` the
    /// document's winning revision after the write.
    /// `isNew`: the document did not exist before this write (nothing to replace).
    static func recordAccess(
        _ db: Database, docRow: Int64, rev: RevID, access: RevisionAccess?, winner: RevID, sequence: UInt64, isNew: Bool = false
    ) throws {
        guard let access else { return }
        // An empty access is not stored: a missing row reads as empty.
        if !access.isEmpty {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(Tables.revAccess)(doc, rev, data) VALUES (?, ?, ?)")
                .execute(arguments: [docRow, rev.description, Data(access.json.canonicalBytes())])
        } else if isNew {
            return
        }
        if isNew {
            // Nothing indexed yet for this document: insert, without looking for rows to replace.
            try insertNewAccess(db, docRow: docRow, rev: rev, access: access, sequence: sequence)
            return
        }
        try indexWinnerAccess(db, docRow: docRow, winner: winner, access: winner == rev ? access : nil, sequence: sequence)
    }

    /// The index rows of a document's first revision.
    private static func insertNewAccess(_ db: Database, docRow: Int64, rev: RevID, access: RevisionAccess, sequence: UInt64) throws {
        let seq = Int64(clamping: sequence)
        let channel = try db.cachedStatement(sql: "INSERT INTO \(Tables.docChannels)(channel, doc, seq, rev, removed) VALUES (?, ?, ?, ?, 0)")
        for name in access.channels { try channel.execute(arguments: [name, docRow, seq, rev.description]) }
        let grant = try db.cachedStatement(sql: "INSERT INTO \(Tables.accessGrants)(grantee, channel, doc, seq) VALUES (?, ?, ?, ?)")
        for (grantee, channels) in access.access {
            for name in channels { try grant.execute(arguments: [grantee, name, docRow, seq]) }
        }
        let role = try db.cachedStatement(sql: "INSERT INTO \(Tables.roleGrants)(user, role, doc, seq) VALUES (?, ?, ?, ?)")
        for (user, roles) in access.roles {
            for name in roles { try role.execute(arguments: [user, name, docRow, seq]) }
        }
    }

    /// The stored access of one revision (nil when none was recorded).
    static func loadAccess(_ db: Database, docRow: Int64, rev: RevID) throws -> RevisionAccess? {
        let statement = try db.cachedStatement(sql: "SELECT data FROM \(Tables.revAccess) WHERE doc = ? AND rev = ?")
        guard let data = try Data.fetchOne(statement, arguments: [docRow, rev.description]) else { return nil }
        return RevisionAccess(json: (try? JSON.parse([UInt8](data))) ?? .null)
    }

    /// Makes the index say what `winner` says (its access is loaded when nil): the
    /// document's channel rows move to `sequence` (channels it left are marked
    /// removed), and its grants are replaced, keeping the sequence of grants that stay.
    static func indexWinnerAccess(_ db: Database, docRow: Int64, winner: RevID, access: RevisionAccess?, sequence: UInt64) throws {
        let winnerAccess = try access ?? loadAccess(db, docRow: docRow, rev: winner) ?? RevisionAccess()
        let seq = Int64(clamping: sequence)
        let rev = winner.description

        // Channels.
        let current = try String.fetchSet(
            db.cachedStatement(sql: "SELECT channel FROM \(Tables.docChannels) WHERE doc = ? AND removed = 0"), arguments: [docRow])
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO \(Tables.docChannels)(channel, doc, seq, rev, removed) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(channel, doc) DO UPDATE SET seq = excluded.seq, rev = excluded.rev, removed = excluded.removed
            """)
        for channel in winnerAccess.channels {
            try upsert.execute(arguments: [channel, docRow, seq, rev, false])
        }
        for channel in current.subtracting(winnerAccess.channels) {
            try upsert.execute(arguments: [channel, docRow, seq, rev, true])
        }

        try indexGrants(db, table: Tables.accessGrants, columns: ("grantee", "channel"), kind: .channel, docRow: docRow, wanted: winnerAccess.access, sequence: seq)
        try indexGrants(db, table: Tables.roleGrants, columns: ("user", "role"), kind: .role, docRow: docRow, wanted: winnerAccess.roles, sequence: seq)
    }

    /// Makes a grant table hold exactly `wanted` (first column → second-column values)
    /// for the document: grants that go are deleted, new ones start at `sequence`, and
    /// grants that stay keep the sequence at which they first took effect.
    private static func indexGrants(
        _ db: Database, table: String, columns: (String, String), kind: Revocation.Kind, docRow: Int64,
        wanted: [String: Set<String>], sequence: Int64
    ) throws {
        var existing: [String: Int64] = [:]
        let select = try db.cachedStatement(sql: "SELECT \(columns.0), \(columns.1), seq FROM \(table) WHERE doc = ?")
        for row in try Row.fetchAll(select, arguments: [docRow]) {
            existing["\(row[0] as String)\u{0}\(row[1] as String)"] = row[2]
        }
        var keys = Set<String>()
        for (first, values) in wanted {
            for value in values { keys.insert("\(first)\u{0}\(value)") }
        }
        try replaceGrants(db, table: table, columns: columns, kind: kind, docRow: docRow, existing: existing, wanted: keys, sequence: sequence)
    }

    /// Deletes the grants that are no longer wanted (recording each as a revocation at
    /// `sequence`) and inserts the new ones at `sequence`; grants that stay keep the
    /// sequence at which they first took effect. Keys are `first NUL second`.
    private static func replaceGrants(
        _ db: Database, table: String, columns: (String, String), kind: Revocation.Kind, docRow: Int64,
        existing: [String: Int64], wanted: Set<String>, sequence: Int64
    ) throws {
        let delete = try db.cachedStatement(sql: "DELETE FROM \(table) WHERE \(columns.0) = ? AND \(columns.1) = ? AND doc = ?")
        var revoked: [Revocation] = []
        for key in existing.keys where !wanted.contains(key) {
            let parts = key.split(separator: "\u{0}", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            try delete.execute(arguments: [parts[0], parts[1], docRow])
            revoked.append(Revocation(grantee: parts[0], kind: kind, name: parts[1]))
        }
        try recordRevocations(db, revoked, sequence: UInt64(sequence))
        let insert = try db.cachedStatement(sql: "INSERT INTO \(table)(\(columns.0), \(columns.1), doc, seq) VALUES (?, ?, ?, ?)")
        for key in wanted where existing[key] == nil {
            let parts = key.split(separator: "\u{0}", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            try insert.execute(arguments: [parts[0], parts[1], docRow, sequence])
        }
    }

    /// Forgets everything the index holds about a document (purge).
    static func removeAccess(_ db: Database, docRow: Int64) throws {
        for table in [Tables.revAccess, Tables.docChannels, Tables.accessGrants, Tables.roleGrants] {
            try db.execute(sql: "DELETE FROM \(table) WHERE doc = ?", arguments: [docRow])
        }
    }
}
