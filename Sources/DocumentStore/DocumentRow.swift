import DocumentModel
import Foundation
import GRDB

/// A `docs` row loaded inside a transaction: the row ID, the decoded tree and the
/// winning body's bytes.
struct DocumentRow {
    let rowID: Int64
    let key: String
    var tree: RevTree
    let sequence: UInt64
    /// The winner's stored body (canonical JSON), if any.
    let winnerBody: [UInt8]?
    /// The winner's stored version vector text (nil: its legacy version).
    let winnerVector: String?

    static let columns = "id, key, seq, tree, body, vv"

    /// Decodes a row of `columns`. The blobs are read in place (no intermediate
    /// `Data`), so a row straight from a statement cursor is never copied.
    init(row: Row) throws {
        rowID = row[0]
        key = row[1]
        sequence = UInt64(row[2] as Int64)
        let decoded = try row.withUnsafeData(atIndex: 3) { bytes in
            Result { try RevTree(serialized: bytes ?? Data()) }
        }
        do {
            tree = try decoded.get()
        } catch {
            throw StoreError(.storage, reason: "corrupt revision tree for \(row[1] as String): \(error)")
        }
        winnerBody = try row.withUnsafeData(atIndex: 4) { bytes in bytes.map { [UInt8]($0) } }
        winnerVector = row[5]
    }

    static func load(_ db: Database, key: String) throws -> DocumentRow? {
        let statement = try db.cachedStatement(sql: "SELECT \(columns) FROM \(Tables.docs) WHERE key = ?")
        guard let row = try Row.fetchOne(statement, arguments: [key]) else { return nil }
        return try DocumentRow(row: row)
    }

    /// Only the revision tree and latest sequence (no body): for lookups that never
    /// read a body, such as `_revs_diff` on every replicated `changes` batch.
    static func loadTree(_ db: Database, key: String) throws -> (tree: RevTree, sequence: UInt64)? {
        let statement = try db.cachedStatement(sql: "SELECT tree, seq FROM \(Tables.docs) WHERE key = ?")
        guard let row = try Row.fetchOne(statement, arguments: [key]) else { return nil }
        let bytes: Data = row[0]
        do {
            return (try RevTree(serialized: bytes), UInt64(row[1] as Int64))
        } catch {
            throw StoreError(.storage, reason: "corrupt revision tree for \(key): \(error)")
        }
    }

    /// The stored body bytes of `rev`, or nil when not stored.
    func bodyBytes(_ db: Database, of rev: RevID) throws -> [UInt8]? {
        if rev == tree.winner { return winnerBody }
        let statement = try db.cachedStatement(sql: "SELECT body FROM \(Tables.revs) WHERE doc = ? AND rev = ?")
        return try Data.fetchOne(statement, arguments: [rowID, rev.description]).map { [UInt8]($0) }
    }

    /// The stored body bytes and version vector text of `rev` (nil when no body is stored).
    func bodyAndVector(_ db: Database, of rev: RevID) throws -> (body: [UInt8], vector: String?)? {
        if rev == tree.winner { return winnerBody.map { ($0, winnerVector) } }
        let statement = try db.cachedStatement(sql: "SELECT body, vv FROM \(Tables.revs) WHERE doc = ? AND rev = ?")
        guard let row = try Row.fetchOne(statement, arguments: [rowID, rev.description]) else { return nil }
        return ([UInt8](row[0] as Data), row[1])
    }

    /// The stored version vector text of `rev` (nil: none stored, its legacy version).
    func vectorText(_ db: Database, of rev: RevID) throws -> String? {
        if rev == tree.winner { return winnerVector }
        let statement = try db.cachedStatement(sql: "SELECT vv FROM \(Tables.revs) WHERE doc = ? AND rev = ?")
        guard let row = try Row.fetchOne(statement, arguments: [rowID, rev.description]) else { return nil }
        return row[0]
    }

    func body(_ db: Database, of rev: RevID) throws -> [String: JSON]? {
        guard let bytes = try bodyBytes(db, of: rev) else { return nil }
        return try Self.decode(bytes)
    }

    static func decode(_ bytes: [UInt8]) throws -> [String: JSON] {
        do {
            guard let object = try JSON.parse(bytes).objectValue else {
                throw StoreError(.storage, reason: "stored body is not an object")
            }
            return object
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.storage, reason: "corrupt stored body: \(error)")
        }
    }
}
