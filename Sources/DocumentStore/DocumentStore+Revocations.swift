import GRDB

/// Something a principal lost: a channel (an `access()` grant of a document, or an
/// admin channel) or a role (a `role()` grant, or an admin role). Recorded with the
/// sequence at which it was lost, so a reader's feed can say which documents it can no
/// longer see although it was away when that happened.
public struct Revocation: Sendable, Equatable, Hashable {
    public enum Kind: String, Sendable {
        case channel
        case role
    }

    /// A user name, or `role:<name>` for a role's channels.
    public let grantee: String
    public let kind: Kind
    /// The channel or role that was lost.
    public let name: String
    /// When (0 until stored).
    public let sequence: UInt64

    public init(grantee: String, kind: Kind, name: String, sequence: UInt64 = 0) {
        self.grantee = grantee
        self.kind = kind
        self.name = name
        self.sequence = sequence
    }
}

extension DocumentStore {
    static func recordRevocations(_ db: Database, _ revocations: [Revocation], sequence: UInt64) throws {
        guard !revocations.isEmpty else { return }
        let insert = try db.cachedStatement(sql: "INSERT INTO \(Tables.revocations)(grantee, kind, name, seq) VALUES (?, ?, ?, ?)")
        for revocation in revocations {
            try insert.execute(arguments: [revocation.grantee, revocation.kind.rawValue, revocation.name, Int64(clamping: sequence)])
        }
    }

    /// Records `revocations` in this collection, at its next sequence (a named
    /// collection's admin channels taken from a principal: its readers' feeds report
    /// them as they report the default collection's).
    public func recordRevocations(_ revocations: [Revocation]) async throws(StoreError) {
        guard !revocations.isEmpty else { return }
        try await write { db in try Self.recordRevocations(db, revocations, sequence: self.lastSequence + 1) }
    }

    /// What `grantees` lost after `since`, oldest first.
    public func revocations(of grantees: [String], since: UInt64) async throws(StoreError) -> [Revocation] {
        guard !grantees.isEmpty else { return [] }
        return try await read { db in
            let marks = grantees.map { _ in "?" }.joined(separator: ",")
            let sql = "SELECT grantee, kind, name, seq FROM \(Tables.revocations) WHERE grantee IN (\(marks)) AND seq > ? ORDER BY seq"
            return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(grantees) + [Int64(clamping: since)])
                .compactMap { row in
                    guard let kind = Revocation.Kind(rawValue: row[1]) else { return nil }
                    return Revocation(grantee: row[0], kind: kind, name: row[2], sequence: UInt64(row[3] as Int64))
                }
        }
    }
}
