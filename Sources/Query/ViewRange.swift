import DocumentModel
import Foundation
import GRDB

/// A query's key range as SQL over `view_rows` / `view_groups` sort keys.
///
/// `ViewRange` owns turning `startkey`/`endkey` (+ doc IDs, `inclusive_end`,
/// `descending`) into a lower and an upper bound in index order, so that every range is
/// one index range scan. Pure.
struct ViewRange: Sendable {
    struct Bound: Sendable {
        let sortKey: Data
        let docID: String?
        let inclusive: Bool
    }

    var lower: Bound?
    var upper: Bound?

    init(_ query: ViewQuery) {
        let start = query.startKey.map {
            Bound(sortKey: Data(ViewCollation.sortKey($0)), docID: query.startKeyDocID, inclusive: true)
        }
        let end = query.endKey.map {
            Bound(sortKey: Data(ViewCollation.sortKey($0)), docID: query.endKeyDocID, inclusive: query.inclusiveEnd)
        }
        (lower, upper) = query.descending ? (end, start) : (start, end)
    }

    /// Whether doc IDs take part in the bounds (then groups cannot be used whole).
    var usesDocIDs: Bool { lower?.docID != nil || upper?.docID != nil }

    /// The SQL condition (starting with " AND") and its arguments; `docIDs` false for
    /// group tables (no doc ID column).
    func condition(docIDs: Bool = true) -> (String, StatementArguments) {
        var sql = ""
        var arguments: StatementArguments = []
        if let lower {
            if docIDs, let docID = lower.docID {
                sql += " AND (sortkey > ? OR (sortkey = ? AND docid \(lower.inclusive ? ">=" : ">") ?))"
                arguments += [lower.sortKey, lower.sortKey, docID]
            } else {
                sql += " AND sortkey \(lower.inclusive ? ">=" : ">") ?"
                arguments += [lower.sortKey]
            }
        }
        if let upper {
            if docIDs, let docID = upper.docID {
                sql += " AND (sortkey < ? OR (sortkey = ? AND docid \(upper.inclusive ? "<=" : "<") ?))"
                arguments += [upper.sortKey, upper.sortKey, docID]
            } else {
                sql += " AND sortkey \(upper.inclusive ? "<=" : "<") ?"
                arguments += [upper.sortKey]
            }
        }
        return (sql, arguments)
    }

    /// The rows *before* the range in iteration order (for `offset`) as a prefix of index
    /// order: ascending, the rows below the lower bound; descending, the rows after the
    /// upper bound, given as the rows up to it with `complement` true (offset = total − count).
    func precedingPrefix(descending: Bool) -> (condition: String, arguments: StatementArguments, complement: Bool)? {
        if descending {
            guard let upper else { return nil }
            let (condition, arguments) = ViewRange(lower: nil, upper: upper).condition()
            return (condition, arguments, true)
        }
        guard let lower else { return nil }
        let below = Bound(sortKey: lower.sortKey, docID: lower.docID, inclusive: !lower.inclusive)
        let (condition, arguments) = ViewRange(lower: nil, upper: below).condition()
        return (condition, arguments, false)
    }

    private init(lower: Bound?, upper: Bound?) {
        self.lower = lower
        self.upper = upper
    }
}
