import DocumentModel
import Foundation
import GRDB

/// A stored principal (user or role): its JSON as the AccessControl module wrote it,
/// and the sequence from which its admin-given access counts.
public struct StoredPrincipal: Sendable, Equatable {
    public let name: String
    public let body: JSON
    /// `last_seq + 1` when the principal was last saved: channels it was given then
    /// count as granted at this sequence (a feed since an earlier sequence backfills).
    public let sequence: UInt64
}

/// A login session (`SyncGatewaySession` cookie).
public struct StoredSession: Sendable, Equatable {
    public init(id: String, user: String, expires: Date, ttl: TimeInterval) {
        self.id = id
        self.user = user
        self.expires = expires
        self.ttl = ttl
    }

    public let id: String
    public let user: String
    public let expires: Date
    public let ttl: TimeInterval
}

/// Principals (users and roles) and sessions, kept in the database's own SQLite file so
/// they are saved with the documents and survive restarts. The store does not interpret
/// them: AccessControl owns their meaning.
extension DocumentStore {
    /// Principal kinds.
    public enum PrincipalKind: String, Sendable {
        case user, role
    }

    public func principal(_ kind: PrincipalKind, named name: String) async throws(StoreError) -> StoredPrincipal? {
        if let base { return try await base.principal(kind, named: name) }
        return try await read { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT name, body, seq FROM principals WHERE kind = ? AND name = ?"),
                arguments: [kind.rawValue, name]
            ).map(Self.principal)
        }
    }

    public func principals(_ kind: PrincipalKind) async throws(StoreError) -> [StoredPrincipal] {
        if let base { return try await base.principals(kind) }
        return try await read { db in
            try Row.fetchAll(db, sql: "SELECT name, body, seq FROM principals WHERE kind = ? ORDER BY name", arguments: [kind.rawValue])
                .map(Self.principal)
        }
    }

    /// Saves a principal (created or replaced), recording what it lost (`revoked`) in the
    /// same transaction; returns what was stored.
    @discardableResult
    public func savePrincipal(
        _ kind: PrincipalKind, name: String, body: JSON, revoked: [Revocation] = []
    ) async throws(StoreError) -> StoredPrincipal {
        if let base { return try await base.savePrincipal(kind, name: name, body: body, revoked: revoked) }
        return try await write { db in
            let sequence = self.lastSequence + 1
            try db.execute(
                sql: "INSERT OR REPLACE INTO principals(kind, name, body, seq) VALUES (?, ?, ?, ?)",
                arguments: [kind.rawValue, name, Data(body.canonicalBytes()), Int64(clamping: sequence)])
            try Self.recordRevocations(db, revoked, sequence: sequence)
            return StoredPrincipal(name: name, body: body, sequence: sequence)
        }
    }

    /// Deletes a principal; false when there was none. Deleting a user ends its sessions.
    public func deletePrincipal(_ kind: PrincipalKind, name: String, revoked: [Revocation] = []) async throws(StoreError) -> Bool {
        if let base { return try await base.deletePrincipal(kind, name: name, revoked: revoked) }
        return try await write { db in
            try db.execute(sql: "DELETE FROM principals WHERE kind = ? AND name = ?", arguments: [kind.rawValue, name])
            let deleted = db.changesCount > 0
            if deleted { try Self.recordRevocations(db, revoked, sequence: self.lastSequence + 1) }
            if kind == .user { try db.execute(sql: "DELETE FROM sessions WHERE user = ?", arguments: [name]) }
            return deleted
        }
    }

    private static func principal(_ row: Row) throws -> StoredPrincipal {
        let data: Data = row[1]
        let body: JSON
        do {
            body = try JSON.parse([UInt8](data))
        } catch {
            throw StoreError(.storage, reason: "corrupt principal \(row[0] as String)")
        }
        return StoredPrincipal(name: row[0], body: body, sequence: UInt64(row[2] as Int64))
    }

    // MARK: Sessions

    public func saveSession(_ session: StoredSession) async throws(StoreError) {
        if let base { return try await base.saveSession(session) }
        return try await write { db in
            try db.execute(sql: "DELETE FROM sessions WHERE expires < ?", arguments: [Date().timeIntervalSince1970])
            try db.execute(
                sql: "INSERT OR REPLACE INTO sessions(id, user, expires, ttl) VALUES (?, ?, ?, ?)",
                arguments: [session.id, session.user, session.expires.timeIntervalSince1970, session.ttl])
        }
    }

    public func session(id: String) async throws(StoreError) -> StoredSession? {
        if let base { return try await base.session(id: id) }
        return try await read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT id, user, expires, ttl FROM sessions WHERE id = ?"), arguments: [id]).map {
                StoredSession(id: $0[0], user: $0[1], expires: Date(timeIntervalSince1970: $0[2]), ttl: $0[3])
            }
        }
    }

    public func deleteSession(id: String) async throws(StoreError) -> Bool {
        if let base { return try await base.deleteSession(id: id) }
        return try await write { db in
            try db.execute(sql: "DELETE FROM sessions WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }
}
