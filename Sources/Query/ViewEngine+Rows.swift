import DocumentModel
import DocumentStore
import Foundation
import GRDB

/// Running a view query: bringing the index up to date as asked, then map rows.
extension ViewEngine {
    /// Runs `query` on view `view` of design document `design`. `visibility` limits the
    /// rows (and what reductions see) to a public-port reader's documents; nil reads all.
    public func query(
        design: String, view: String, query: ViewQuery, visibility: ViewVisibility? = nil
    ) async throws(ViewError) -> ViewResult {
        let document = try await designDocument(named: design)
        guard let definition = document.views[view] else { throw .missingView(view) }
        try query.validate(viewReduces: definition.reduce != nil)
        let index = try await index(for: definition, viewName: view)
        return try await run(query, on: index, visibility: visibility)
    }

    /// Runs `query` on an opened index (the entry point for other query kinds built on
    /// views, e.g. live queries, which watch `index.sequence`).
    public nonisolated func run(_ query: ViewQuery, on index: ViewIndex, visibility: ViewVisibility?) async throws(ViewError) -> ViewResult {
        if query.update == .true { try await index.update() }
        defer {
            if query.update == .lazy { Task { try? await index.update() } }
        }
        let sequence = await index.sequence
        let updateSeq = query.updateSeq ? sequence : nil
        if query.isReduce(viewReduces: index.definition.reduce != nil), let reduce = index.functions.reduce {
            let rows = try await reduced(query, index: index, reduce: reduce, visibility: visibility)
            return .reduced(rows: rows, updateSeq: updateSeq)
        }
        return try await mapRows(query, index: index, visibility: visibility, updateSeq: updateSeq)
    }

    nonisolated func mapRows(
        _ query: ViewQuery, index: ViewIndex, visibility: ViewVisibility?, updateSeq: UInt64?
    ) async throws(ViewError) -> ViewResult {
        let view = index.id
        let order = query.descending ? "DESC" : "ASC"
        var rows: [ViewRow] = []
        var offset = query.skip
        var total = Int(await index.rowCount)
        if let visibility {
            total = try await visibleRowCount(view: view, visibility: visibility)
            var filter = VisibilityFilter(store: store, visibility: visibility)
            var skipped = 0
            var pageStart = 0
            let limit = query.limit ?? Int.max
            while rows.count < limit {
                let page = try await fetchRows(query, view: view, order: order, limit: 500, offset: pageStart)
                pageStart += page.count
                let visible = try await filter.visible(page.map(\.id))
                for row in page where visible.contains(row.id) && rows.count < limit {
                    if skipped < query.skip { skipped += 1 } else { rows.append(row) }
                }
                if page.count < 500 { break }
            }
        } else {
            rows = try await fetchRows(query, view: view, order: order, limit: query.limit ?? -1, offset: query.skip)
            if query.keys == nil { offset += try await precedingCount(query, view: view) }
        }
        if query.includeDocs { rows = try await withDocs(rows, conflicts: query.conflicts, visibility: visibility) }
        return .rows(totalRows: total, offset: query.keys == nil ? offset : 0, rows: rows, updateSeq: updateSeq)
    }

    /// Rows of the query's range (or keys) in order, `limit` (-1: all) after `offset`.
    nonisolated func fetchRows(_ query: ViewQuery, view: Int64, order: String, limit: Int, offset: Int) async throws(ViewError) -> [ViewRow] {
        let keys = query.keys
        let range = ViewRange(query)
        return try await read { db in
            var result: [ViewRow] = []
            if let keys {
                let statement = try db.cachedStatement(
                    sql: "SELECT docid, key, value FROM view_rows WHERE view = ? AND sortkey = ? ORDER BY docid \(order), n \(order)")
                for key in keys {
                    for row in try Row.fetchAll(statement, arguments: [view, Data(ViewCollation.sortKey(key))]) {
                        result.append(try Self.viewRow(row))
                    }
                }
                let start = min(offset, result.count)
                let end = limit < 0 ? result.count : min(result.count, start + limit)
                return Array(result[start..<end])
            }
            let (condition, arguments) = range.condition()
            let sql = "SELECT docid, key, value FROM view_rows WHERE view = ?\(condition) "
                + "ORDER BY sortkey \(order), docid \(order), n \(order) LIMIT \(limit) OFFSET \(offset)"
            for row in try Row.fetchAll(db, sql: sql, arguments: [view] + arguments) { result.append(try Self.viewRow(row)) }
            return result
        }
    }

    static func viewRow(_ row: Row) throws -> ViewRow {
        ViewRow(id: row[0], key: try ViewStorage.decode(row[1]), value: try ViewStorage.decode(row[2]), doc: nil)
    }

    /// Rows before the range in iteration order (CouchDB's `offset`): from the index's
    /// block counts (`ViewBlocks`), or by counting rows for an index that has none yet.
    private nonisolated func precedingCount(_ query: ViewQuery, view: Int64) async throws(ViewError) -> Int {
        guard let prefix = ViewRange(query).precedingPrefix(descending: query.descending) else { return 0 }
        return try await read { db in
            let counted = try ViewBlocks.countPrefix(db, view: view, condition: prefix.condition, arguments: prefix.arguments)
            let count = try counted ?? Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM view_rows WHERE view = ?\(prefix.condition)", arguments: [view] + prefix.arguments) ?? 0
            guard prefix.complement else { return count }
            let total = try counted != nil
                ? Int.fetchOne(db, sql: "SELECT COALESCE(SUM(count), 0) FROM view_blocks WHERE view = ?", arguments: [view]) ?? 0
                : Int.fetchOne(db, sql: "SELECT COUNT(*) FROM view_rows WHERE view = ?", arguments: [view]) ?? 0
            return total - count
        }
    }

    /// Rows of the documents a reader may see (their `total_rows`).
    private nonisolated func visibleRowCount(view: Int64, visibility: ViewVisibility) async throws(ViewError) -> Int {
        let counts: [(String, Int)] = try await read { db in
            try Row.fetchAll(db, sql: "SELECT docid, COUNT(*) FROM view_rows WHERE view = ? GROUP BY docid", arguments: [view])
                .map { ($0[0] as String, $0[1] as Int) }
        }
        var filter = VisibilityFilter(store: store, visibility: visibility)
        var total = 0
        for start in stride(from: 0, to: counts.count, by: 500) {
            let chunk = counts[start..<min(start + 500, counts.count)]
            let visible = try await filter.visible(chunk.map(\.0))
            total += chunk.filter { visible.contains($0.0) }.reduce(0) { $0 + $1.1 }
        }
        return total
    }

    /// `include_docs`: each row's document, or the one its value links to with `_id`.
    private nonisolated func withDocs(_ rows: [ViewRow], conflicts: Bool, visibility: ViewVisibility?) async throws(ViewError) -> [ViewRow] {
        let ids = rows.map { row in row.value.objectValue?["_id"]?.stringValue ?? row.id }
        let listings: [DocumentListing?]
        do {
            listings = try await store.documents(ids, includeBodies: true)
        } catch {
            throw .storage(error)
        }
        var visible = Set(ids)
        if let visibility {
            var filter = VisibilityFilter(store: store, visibility: visibility)
            visible = try await filter.visible(ids)
        }
        return zip(rows, zip(ids, listings)).map { row, pair in
            var row = row
            let (id, listing) = pair
            row.doc = .some(listing.flatMap { $0.deleted || !visible.contains(id) ? nil : $0 })
            return row
        }
    }

    nonisolated func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(ViewError) -> T {
        do {
            return try await store.auxiliaryRead(body)
        } catch {
            throw .storage(error)
        }
    }
}

/// Which documents a reader may see, asked of the store in batches and remembered for
/// the length of one query.
struct VisibilityFilter {
    let store: DocumentStore
    let visibility: ViewVisibility
    private var known: [String: Bool] = [:]

    init(store: DocumentStore, visibility: ViewVisibility) {
        self.store = store
        self.visibility = visibility
    }

    mutating func visible(_ ids: [String]) async throws(ViewError) -> Set<String> {
        let unknown = Array(Set(ids.filter { known[$0] == nil }))
        if !unknown.isEmpty {
            let access: [String: RevisionAccess]
            do {
                access = try await store.currentAccess(docIDs: unknown)
            } catch {
                throw .storage(error)
            }
            for id in unknown { known[id] = visibility.canRead(access[id]?.channels ?? []) }
        }
        return Set(ids.filter { known[$0] == true })
    }
}
