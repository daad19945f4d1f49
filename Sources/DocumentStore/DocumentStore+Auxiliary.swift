import GRDB

extension DocumentStore {
    /// Runs `body` in a read transaction of this database's SQLite file, for a module
    /// above this one that keeps tables of its own beside the documents (Query's view
    /// indexes, `view_*`). It runs like every store read: concurrently with writes (WAL),
    /// and shut out only by a rekey; as a `scan` (on a reader's queue), since the size of
    /// what a view reads is not known here.
    ///
    /// Such tables are owned by the module that creates them (with `CREATE TABLE IF NOT
    /// EXISTS` through `auxiliaryWrite`): DocumentStore never reads them, and their
    /// writers never touch DocumentStore's tables. See docs/storage.md.
    public func auxiliaryRead<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        try await scan(body)
    }

    /// Runs `body` in a write transaction (the same single writer as document writes, so
    /// keep it short: compute outside, write inside). See `auxiliaryRead`.
    public func auxiliaryWrite<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        try await write(body)
    }
}
