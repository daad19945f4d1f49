import DocumentModel
import Foundation
import GRDB

/// A `_local/` document: not replicated, not in the changes feed, revisions `0-N`.
public struct LocalDocument: Sendable, Equatable {
    public let id: String
    public let rev: String
    public let body: [String: JSON]

    public init(id: String, rev: String, body: [String: JSON]) {
        self.id = id
        self.rev = rev
        self.body = body
    }
}

extension DocumentStore {
    /// A local document by its ID (without the `_local/` prefix).
    public func localDocument(_ id: String) async throws(StoreError) -> LocalDocument? {
        try await read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT gen, body FROM \(Tables.localDocs) WHERE key = ?", arguments: [id]) else {
                return nil
            }
            let bytes: Data = row[1]
            return LocalDocument(id: id, rev: "0-\(row[0] as Int64)", body: try DocumentRow.decode([UInt8](bytes)))
        }
    }

    /// Creates or updates a local document. `rev` must name the current revision when
    /// the document exists (else 409).
    public func putLocal(_ id: String, body: [String: JSON], rev: String?) async throws(StoreError) -> String {
        guard !id.isEmpty else { throw .badRequest("Invalid local doc ID") }
        var body = body
        for key in body.keys where key.hasPrefix("_") { body.removeValue(forKey: key) }
        let bytes = JSON.object(body).canonicalBytes()
        if bytes.count > configuration.maxDocumentSize {
            throw StoreError(.tooLarge, reason: "Document exceeds the maximum size of \(configuration.maxDocumentSize) bytes")
        }
        let result: Result<String, StoreError> = try await write { db in
            let current = try Int64.fetchOne(db, sql: "SELECT gen FROM \(Tables.localDocs) WHERE key = ?", arguments: [id])
            if let current, rev != "0-\(current)" { return .failure(.updateConflict) }
            if current == nil, let rev, !rev.isEmpty { return .failure(.updateConflict) }
            let next = (current ?? 0) + 1
            try db.execute(
                sql: "INSERT OR REPLACE INTO \(Tables.localDocs)(key, gen, body) VALUES (?, ?, ?)",
                arguments: [id, next, Data(bytes)])
            return .success("0-\(next)")
        }
        return try result.get()
    }

    /// Deletes a local document; `rev` must be current.
    public func deleteLocal(_ id: String, rev: String?) async throws(StoreError) {
        let result: Result<Void, StoreError> = try await write { db in
            guard let current = try Int64.fetchOne(db, sql: "SELECT gen FROM \(Tables.localDocs) WHERE key = ?", arguments: [id]) else {
                return .failure(.missing)
            }
            guard rev == "0-\(current)" else { return .failure(.updateConflict) }
            try db.execute(sql: "DELETE FROM \(Tables.localDocs) WHERE key = ?", arguments: [id])
            return .success(())
        }
        try result.get()
    }
}
