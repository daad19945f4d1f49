import DocumentModel
import GRDB

/// Where revisions came from (`RevisionOrigin`), kept beside the documents in
/// `rev_origins`: each committed change records the sequences it was given and who
/// wrote them, in the change's own transaction. A revision's origin is that of the
/// sequence at which it arrived (`RevTree.Node.sequence`). Consecutive changes with
/// the same origin share one row, so a bulk load or a long replication costs a row,
/// not a row per revision.
extension DocumentStore {
    /// Records that sequences `first…last` were written with `origin` (inside the
    /// change's write transaction): extends the latest row when it ends just before
    /// `first` with the same origin, else adds one.
    static func recordOrigin(_ db: Database, _ origin: RevisionOrigin, first: UInt64, last: UInt64) throws {
        guard first <= last else { return }
        let extend = try db.cachedStatement(sql: """
            UPDATE \(Tables.revOrigins) SET last_seq = ?
            WHERE first_seq = (SELECT MAX(first_seq) FROM \(Tables.revOrigins))
              AND last_seq = ? AND kind = ? AND node IS ? AND detail IS ?
            """)
        try extend.execute(arguments: [
            Int64(clamping: last), Int64(clamping: first) - 1, origin.kind.rawValue, origin.node, origin.detail,
        ])
        guard db.changesCount == 0 else { return }
        let insert = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO \(Tables.revOrigins)(first_seq, last_seq, kind, node, detail) VALUES (?, ?, ?, ?, ?)
            """)
        try insert.execute(arguments: [
            Int64(clamping: first), Int64(clamping: last), origin.kind.rawValue, origin.node, origin.detail,
        ])
    }

    /// The origin of every revision of `tree` whose arrival is recorded (revisions that
    /// arrived before origins were kept, or by a change that recorded none, are absent).
    public func origins(of tree: RevTree) async throws(StoreError) -> [RevID: RevisionOrigin] {
        let sequences = Set(tree.nodes.map(\.sequence))
        let found = try await read { db -> [UInt64: RevisionOrigin] in
            let statement = try db.cachedStatement(sql: """
                SELECT last_seq, kind, node, detail FROM \(Tables.revOrigins) WHERE first_seq <= ? ORDER BY first_seq DESC LIMIT 1
                """)
            var found: [UInt64: RevisionOrigin] = [:]
            for sequence in sequences {
                guard let row = try Row.fetchOne(statement, arguments: [Int64(clamping: sequence)]),
                      let last: Int64 = row[0], last >= Int64(clamping: sequence),
                      let kind = RevisionOrigin.Kind(rawValue: row[1] as String)
                else { continue }
                found[sequence] = RevisionOrigin(kind: kind, node: row[2], detail: row[3])
            }
            return found
        }
        var origins: [RevID: RevisionOrigin] = [:]
        for node in tree.nodes {
            if let origin = found[node.sequence] { origins[node.revID] = origin }
        }
        return origins
    }
}
