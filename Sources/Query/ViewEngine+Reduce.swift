import DocumentModel
import DocumentStore
import Foundation
import GRDB
import JSEngine

/// Reduce queries. Three ways, cheapest first:
/// 1. whole index, a stored level (`group_level` 0–2 or `group=true`), administrator:
///    read the stored groups (`view_groups`) — no reduction at all;
/// 2. a key range without doc-ID bounds, administrator: the stored exact-key groups in
///    the range, rereduced per requested group — cost grows with distinct keys, not rows;
/// 3. `keys`, doc-ID bounds, or a public-port reader: the matching (visible) rows,
///    reduced per group — a reader's reduction never sees a row it could not read.
extension ViewEngine {
    nonisolated func reduced(
        _ query: ViewQuery, index: ViewIndex, reduce: ReduceFunction, visibility: ViewVisibility?
    ) async throws(ViewError) -> [ReducedRow] {
        let grouping = query.grouping ?? .level(0)
        let view = index.id
        let order = query.descending ? "DESC" : "ASC"
        let range = ViewRange(query)
        var rows: [ReducedRow]
        if visibility == nil, query.keys == nil, !range.usesDocIDs {
            if query.startKey == nil, query.endKey == nil, let level = grouping.storedLevel {
                let limit = query.limit ?? -1
                let stored: [(JSON, JSON)] = try await read { db in
                    try Row.fetchAll(
                        db,
                        sql: "SELECT key, value FROM view_groups WHERE view = ? AND level = ? ORDER BY sortkey \(order) LIMIT \(limit) OFFSET \(query.skip)",
                        arguments: [view, level]
                    ).map { (try ViewStorage.decode($0[0]), try ViewStorage.decode($0[1])) }
                }
                return stored.map { ReducedRow(key: $0.0, value: reduce.finalize($0.1)) }
            }
            let (condition, arguments) = range.condition(docIDs: false)
            let exact: [(JSON, JSON)] = try await read { db in
                try Row.fetchAll(
                    db, sql: "SELECT key, value FROM view_groups WHERE view = ? AND level = ?\(condition) ORDER BY sortkey \(order)",
                    arguments: [view, ViewStorage.exactLevel] + arguments
                ).map { (try ViewStorage.decode($0[0]), try ViewStorage.decode($0[1])) }
            }
            let runs = Self.runs(exact, grouping: grouping)
            let values = try await call { () async throws(JSError) in try await reduce.rereduce(groups: runs.map { $0.items }) }
            rows = zip(runs, values).map { ReducedRow(key: $0.key, value: $1) }
        } else {
            var matched: [ViewRow] = []
            var offset = 0
            var filter = visibility.map { VisibilityFilter(store: store, visibility: $0) }
            var unbounded = query
            unbounded.skip = 0
            unbounded.limit = nil
            while true {
                let page = try await fetchRows(unbounded, view: view, order: order, limit: 2000, offset: offset)
                offset += page.count
                if var current = filter {
                    let visible = try await current.visible(page.map(\.id))
                    filter = current
                    matched += page.filter { visible.contains($0.id) }
                } else {
                    matched += page
                }
                if page.count < 2000 { break }
            }
            // With `keys`, each key's rows group on their own, in the order of `keys`.
            let runs = Self.runs(matched.map { ($0.key, (key: $0.key, id: $0.id, value: $0.value)) }, grouping: grouping, splitByKey: query.keys != nil)
            let values = try await call { () async throws(JSError) in try await reduce.reduce(groups: runs.map { $0.items }) }
            rows = zip(runs, values).map { ReducedRow(key: $0.key, value: $1) }
        }
        let start = min(query.skip, rows.count)
        let end = query.limit.map { min(rows.count, start + $0) } ?? rows.count
        return rows[start..<end].map { ReducedRow(key: $0.key, value: reduce.finalize($0.value)) }
    }

    /// Consecutive items whose keys fall in the same group (keys arrive in index order,
    /// so a group's items are adjacent). `splitByKey`: also split wherever the key itself
    /// changes (with `keys`, each requested key is grouped on its own).
    static func runs<T>(_ items: [(JSON, T)], grouping: ViewGrouping.Level, splitByKey: Bool = false) -> [(key: JSON, items: [T])] {
        var result: [(key: JSON, items: [T])] = []
        var currentSortKey: [UInt8]?
        var lastKey: [UInt8]?
        for (key, item) in items {
            let groupKey = grouping.groupKey(key)
            let sortKey = ViewCollation.sortKey(groupKey)
            let keySort = ViewCollation.sortKey(key)
            let backwards = splitByKey && lastKey != nil && lastKey != keySort
            if sortKey == currentSortKey, !backwards, !result.isEmpty {
                result[result.count - 1].items.append(item)
            } else {
                result.append((groupKey, [item]))
                currentSortKey = sortKey
            }
            lastKey = keySort
        }
        return result
    }

    private nonisolated func call<T: Sendable>(_ body: () async throws(JSError) -> T) async throws(ViewError) -> T {
        do {
            return try await body()
        } catch {
            throw .functionFailed("reduce function failed: \(error.message)")
        }
    }
}
