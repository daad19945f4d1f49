import Foundation
import GRDB

/// Row counts of a view index kept per block of consecutive rows (`view_blocks`), so that
/// CouchDB's `offset` — how many rows come before a query's start key — costs a sum over
/// the blocks and a scan of at most one block, not a count of every preceding row.
///
/// CouchDB reads the count from its B-tree's inner nodes; SQLite keeps no counts in its
/// B-trees, so `ViewBlocks` owns a coarse order-statistics layer beside `view_rows`: each
/// block is named by its lower bound, the `(sortkey, docid, n)` of the row it started at
/// (the first block's bound is below every row), and holds how many rows lie between its
/// bound and the next block's. Row writes adjust the counts of their blocks; a block that
/// grows past `splitAbove` rows is cut into blocks of `blockSize`, an empty one is merged
/// away. Functions here run inside a transaction given by the caller.
enum ViewBlocks {
    static let blockSize = 256
    static let splitAbove = 2 * blockSize

    /// A position in index order: a row's `(sortkey, docid, n)`.
    struct Bound: Comparable, Sendable {
        let sortKey: [UInt8]
        let docID: [UInt8]
        let n: Int64

        /// Below every row: the sort key `0x00` is no key's (every key starts with a type tag ≥ 1).
        static let first = Bound(sortKey: [0], docID: [], n: -1)

        init(sortKey: [UInt8], docID: [UInt8], n: Int64) {
            self.sortKey = sortKey
            self.docID = docID
            self.n = n
        }

        init(_ row: Row) {
            sortKey = [UInt8](row[0] as Data)
            docID = Array((row[1] as String).utf8)
            n = row[2]
        }

        /// SQLite's order: BLOBs and BINARY-collated text by bytes (memcmp, then length).
        static func < (a: Bound, b: Bound) -> Bool {
            if a.sortKey != b.sortKey { return a.sortKey.lexicographicallyPrecedes(b.sortKey) }
            if a.docID != b.docID { return a.docID.lexicographicallyPrecedes(b.docID) }
            return a.n < b.n
        }

        var arguments: StatementArguments {
            [Data(sortKey), String(decoding: docID, as: UTF8.self), n]
        }
    }

    /// The blocks of one index, read at the start of a write and written back at its end.
    struct Table {
        let view: Int64
        private(set) var bounds: [Bound]
        private(set) var counts: [Int64]
        private var touched = Set<Int>()

        fileprivate init(view: Int64, bounds: [Bound], counts: [Int64]) {
            self.view = view
            self.bounds = bounds
            self.counts = counts
        }

        /// Counts a row written (`delta` 1) or deleted (-1) in its block.
        mutating func add(_ row: Bound, delta: Int64) {
            var low = 0
            var high = bounds.count
            // The last block whose bound is ≤ row (bounds[0] is below every row).
            while high - low > 1 {
                let middle = (low + high) / 2
                if row < bounds[middle] { high = middle } else { low = middle }
            }
            counts[low] += delta
            touched.insert(low)
        }

        /// Writes the changed counts back: empty blocks go (their rows belong to the block
        /// before), oversized ones are cut by scanning their rows.
        func save(_ db: Database) throws {
            let update = try db.cachedStatement(sql: "UPDATE view_blocks SET count = ? WHERE view = ? AND sortkey = ? AND docid = ? AND n = ?")
            let delete = try db.cachedStatement(sql: "DELETE FROM view_blocks WHERE view = ? AND sortkey = ? AND docid = ? AND n = ?")
            for index in touched.sorted() {
                let bound = bounds[index]
                if counts[index] <= 0, index > 0 {
                    try delete.execute(arguments: [view] + bound.arguments)
                } else if counts[index] > splitAbove {
                    try ViewBlocks.split(db, view: view, from: bound, to: index + 1 < bounds.count ? bounds[index + 1] : nil)
                } else {
                    try update.execute(arguments: [counts[index], view] + bound.arguments)
                }
            }
        }
    }

    /// The blocks of `view`, in order; an index without any (new, or made before blocks
    /// existed) gets them now from its rows.
    static func load(_ db: Database, view: Int64) throws -> Table {
        var bounds: [Bound] = []
        var counts: [Int64] = []
        let rows = try Row.fetchAll(
            db, sql: "SELECT sortkey, docid, n, count FROM view_blocks WHERE view = ? ORDER BY sortkey, docid, n", arguments: [view])
        for row in rows {
            bounds.append(Bound(row))
            counts.append(row[3])
        }
        if bounds.isEmpty {
            try db.execute(
                sql: "INSERT INTO view_blocks(view, sortkey, docid, n, count) VALUES (?, ?, ?, ?, 0)",
                arguments: [view] + Bound.first.arguments)
            try split(db, view: view, from: .first, to: nil)
            return try load(db, view: view)
        }
        return Table(view: view, bounds: bounds, counts: counts)
    }

    /// Recounts the block starting at `from` (up to `to`) and cuts it into blocks of
    /// `blockSize` rows.
    static func split(_ db: Database, view: Int64, from: Bound, to: Bound?) throws {
        var sql = "SELECT sortkey, docid, n FROM view_rows WHERE view = ? AND (sortkey, docid, n) >= (?, ?, ?)"
        var arguments: StatementArguments = [view] + from.arguments
        if let to {
            sql += " AND (sortkey, docid, n) < (?, ?, ?)"
            arguments += to.arguments
        }
        sql += " ORDER BY sortkey, docid, n"
        let insert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO view_blocks(view, sortkey, docid, n, count) VALUES (?, ?, ?, ?, ?)")
        var start = from
        var count: Int64 = 0
        let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try cursor.next() {
            if count == blockSize {
                try insert.execute(arguments: [view] + start.arguments + [count])
                start = Bound(row)
                count = 0
            }
            count += 1
        }
        try insert.execute(arguments: [view] + start.arguments + [count])
    }

    /// How many rows satisfy `condition` (SQL over `sortkey` and `docid`, starting with
    /// " AND"), a condition every row below some position satisfies and no row above it
    /// (a prefix of index order). Nil when the index has no blocks yet.
    static func countPrefix(_ db: Database, view: Int64, condition: String, arguments: StatementArguments) throws -> Int? {
        guard let block = try Row.fetchOne(
            db, sql: "SELECT sortkey, docid, n FROM view_blocks WHERE view = ?\(condition) ORDER BY sortkey DESC, docid DESC, n DESC LIMIT 1",
            arguments: [view] + arguments)
        else {
            let any = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM view_blocks WHERE view = ?)", arguments: [view]) ?? false
            return any ? 0 : nil
        }
        let bound = Bound(block)
        let before = try Int.fetchOne(
            db, sql: "SELECT COALESCE(SUM(count), 0) FROM view_blocks WHERE view = ? AND (sortkey, docid, n) < (?, ?, ?)",
            arguments: [view] + bound.arguments) ?? 0
        let inside = try Int.fetchOne(
            db, sql: "SELECT COUNT(*) FROM view_rows WHERE view = ? AND (sortkey, docid, n) >= (?, ?, ?)\(condition)",
            arguments: [view] + bound.arguments + arguments) ?? 0
        return before + inside
    }
}
