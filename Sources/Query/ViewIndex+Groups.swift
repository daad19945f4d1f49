import DocumentModel
import DocumentStore
import Foundation
import GRDB

/// Stored reductions: CouchDB keeps partial reductions in its B-tree's inner nodes; a
/// view index here keeps them in `view_groups`, one tree of four levels:
///
///     level 0 (all rows) ← level 1 groups ← level 2 groups ← exact-key groups ← rows
///
/// An exact group reduces the rows of one distinct key; a level-k group (k = 2, 1, 0)
/// rereduces its child groups one level down (array keys truncated to k elements; a
/// non-array key, or a shorter array, is its own group at every level). After the rows
/// of a batch change, only the groups on the paths from the changed keys to the root
/// are recomputed, bottom up, each from its children — never the whole index.
extension ViewIndex {
    /// Recomputes the groups of the keys marked dirty, bottom up, then clears the marks.
    func flushGroups() async throws {
        guard let reduce = functions.reduce else { return }
        let index = id
        let dirty: [(sortKey: Data, key: JSON)]
        do {
            dirty = try await store.auxiliaryRead { db in
                try Row.fetchAll(db, sql: "SELECT sortkey, key FROM view_dirty WHERE view = ?", arguments: [index]).map {
                    (($0[0] as Data), try ViewStorage.decode($0[1]))
                }
            }
        } catch {
            throw ViewError.storage(error)
        }
        guard !dirty.isEmpty else { return }

        // Exact groups: reduce their rows.
        for chunk in stride(from: 0, to: dirty.count, by: 500).map({ Array(dirty[$0..<min($0 + 500, dirty.count)]) }) {
            let rowsByGroup: [[(key: JSON, id: String, value: JSON)]] = try await read { db in
                let statement = try db.cachedStatement(sql: "SELECT key, docid, value FROM view_rows WHERE view = ? AND sortkey = ?")
                return try chunk.map { group in
                    try Row.fetchAll(statement, arguments: [index, group.sortKey]).map {
                        (try ViewStorage.decode($0[0]), $0[1] as String, try ViewStorage.decode($0[2]))
                    }
                }
            }
            let nonEmpty = rowsByGroup.filter { !$0.isEmpty }
            let values = try await reduceGroups(reduce, nonEmpty)
            var iterator = values.makeIterator()
            let writes: [GroupWrite] = zip(chunk, rowsByGroup).map { group, rows in
                GroupWrite(sortKey: group.sortKey, key: group.key, value: rows.isEmpty ? JSON?.none : iterator.next()!)
            }
            try await write(writes, level: ViewStorage.exactLevel)
        }

        // Levels 2, 1, 0: each affected group rereduces its children one level down.
        var keys = dirty.map(\.key)
        for level in stride(from: ViewStorage.storedLevels, through: 0, by: -1) {
            let childLevel = level == ViewStorage.storedLevels ? ViewStorage.exactLevel : level + 1
            var seen = Set<Data>()
            var groups: [(sortKey: Data, key: JSON)] = []
            for key in keys {
                let groupKey = ViewGrouping.truncate(key, level: level)
                let sortKey = Data(ViewCollation.sortKey(groupKey))
                if seen.insert(sortKey).inserted { groups.append((sortKey, groupKey)) }
            }
            for chunk in stride(from: 0, to: groups.count, by: 500).map({ Array(groups[$0..<min($0 + 500, groups.count)]) }) {
                let children: [[JSON]] = try await read { db in
                    try chunk.map { group in
                        let (sql, arguments) = ViewGrouping.childQuery(index: index, childLevel: childLevel, key: group.key, level: level)
                        return try Row.fetchAll(db, sql: sql, arguments: arguments).map { try ViewStorage.decode($0[0]) }
                    }
                }
                let values = try await rereduceGroups(reduce, children.filter { !$0.isEmpty })
                var iterator = values.makeIterator()
                let writes = zip(chunk, children).map { group, partials in
                    GroupWrite(sortKey: group.sortKey, key: group.key, value: partials.isEmpty ? JSON?.none : iterator.next()!)
                }
                try await write(writes, level: level)
            }
            keys = groups.map(\.key)
        }
        let cleared = dirty.map(\.sortKey)
        do {
            try await store.auxiliaryWrite { db in
                let statement = try db.cachedStatement(sql: "DELETE FROM view_dirty WHERE view = ? AND sortkey = ?")
                for sortKey in cleared { try statement.execute(arguments: [index, sortKey]) }
            }
        } catch {
            throw ViewError.storage(error)
        }
    }

    struct GroupWrite: Sendable {
        let sortKey: Data
        let key: JSON
        /// nil: the group has no rows any more.
        let value: JSON?
    }

    private func write(_ writes: [GroupWrite], level: Int) async throws {
        let index = id
        do {
            try await store.auxiliaryWrite { db in
                let upsert = try db.cachedStatement(
                    sql: "INSERT OR REPLACE INTO view_groups(view, level, sortkey, key, value) VALUES (?, ?, ?, ?, ?)")
                let delete = try db.cachedStatement(sql: "DELETE FROM view_groups WHERE view = ? AND level = ? AND sortkey = ?")
                for write in writes {
                    if let value = write.value {
                        try upsert.execute(arguments: [index, level, write.sortKey, Data(write.key.canonicalBytes()), Data(value.canonicalBytes())])
                    } else {
                        try delete.execute(arguments: [index, level, write.sortKey])
                    }
                }
            }
        } catch {
            throw ViewError.storage(error)
        }
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await store.auxiliaryRead(body)
        } catch {
            throw ViewError.storage(error)
        }
    }

    private func reduceGroups(_ reduce: ReduceFunction, _ groups: [[(key: JSON, id: String, value: JSON)]]) async throws -> [JSON] {
        do {
            return try await reduce.reduce(groups: groups)
        } catch {
            throw markFailed(error.message)
        }
    }

    private func rereduceGroups(_ reduce: ReduceFunction, _ groups: [[JSON]]) async throws -> [JSON] {
        do {
            return try await reduce.rereduce(groups: groups)
        } catch {
            throw markFailed(error.message)
        }
    }

    private func markFailed(_ message: String) -> ViewError {
        let failure = ViewError.functionFailed("reduce function of view \(signature.prefix(8)) failed: \(message)")
        setFailure(failure)
        return failure
    }
}
