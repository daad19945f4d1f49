import GRDB

extension DocumentStore {
    /// How many documents changed after `since` (each document counts once, at its
    /// latest change), counted up to `limit`: what a replication link still has to send
    /// when its peer acknowledged everything through `since`. One index range scan
    /// (`docs_by_seq`), cheap at any size thanks to the bound.
    public func countChanged(since: UInt64, limit: Int) async throws(StoreError) -> Int {
        try await read(bounded: true) { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM (SELECT 1 FROM \(Tables.docs) WHERE seq > ? LIMIT ?)",
                arguments: [Int64(clamping: since), max(0, limit)]) ?? 0
        }
    }
}
