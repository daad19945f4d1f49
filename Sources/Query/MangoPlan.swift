import DocumentModel
import Foundation

/// How a `_find` runs: which index (nil: CouchDB's special `_all_docs` index, a scan
/// of every document by ID), which key range of it, in which direction, and why.
/// Choosing the plan is pure: it depends only on the query and the indexes.
public struct MangoPlan: Sendable, Equatable {
    /// The index scanned; nil for `_all_docs`.
    public var index: MangoIndexDefinition?
    /// Sort-key bounds of the scan (`lower` inclusive, `upper` exclusive); nil: open.
    public var lower: [UInt8]?
    public var upper: [UInt8]?
    /// For `_all_docs`: document ID bounds (inclusive), from conditions on `_id`.
    public var idRange: (low: String?, high: String?) = (nil, nil)
    public var reverse = false
    /// Set when no index fits: CouchDB's advice, returned as `warning`.
    public var warning: String?

    public static func == (a: MangoPlan, b: MangoPlan) -> Bool {
        a.index == b.index && a.lower == b.lower && a.upper == b.upper && a.idRange.low == b.idRange.low
            && a.idRange.high == b.idRange.high && a.reverse == b.reverse && a.warning == b.warning
    }

    static let noIndexWarning = "No matching index found, create an index to optimize query time."
    static let idField = MangoField(["_id"])

    /// Picks the index for `query` among `indexes` (CouchDB's rules, simplified: an index
    /// is usable when every one of its fields is required by the selector or sorted on,
    /// and — with a sort — when its fields, after those the selector fixes with `$eq`,
    /// start with the sort fields; a partial index only when `use_index` names it).
    public static func choose(_ query: MangoQuery, indexes: [MangoIndexDefinition]) throws(MangoError) -> MangoPlan {
        let required = query.selector.requiredFields.union(query.sort)
        let usable = indexes.filter { index in
            guard index.fields.allSatisfy(required.contains), sortFits(query, index) else { return false }
            if index.partialFilter != nil {
                return query.useIndex.map { $0.ddoc == index.ddoc && ($0.name == nil || $0.name == index.name) } ?? false
            }
            return true
        }
        var warning: String?
        var chosen: MangoIndexDefinition?
        if let wanted = query.useIndex {
            chosen = usable.first { $0.ddoc == wanted.ddoc && (wanted.name == nil || $0.name == wanted.name) }
            if chosen == nil {
                let name = wanted.name.map { "\(wanted.ddoc), \($0)" } ?? wanted.ddoc
                warning = "\(name) was not used because it does not contain a valid index for this query."
            }
        }
        if chosen == nil {
            // The index whose leading fields the selector constrains most, then by name.
            chosen = usable.max { a, b in
                let (ra, rb) = (rank(a, query), rank(b, query))
                return ra != rb ? ra < rb : a.ddoc + a.name > b.ddoc + b.name
            }
        }
        guard let index = chosen else {
            // `_all_docs` sorts by `_id` only.
            if !query.sort.isEmpty && query.sort != [idField] { throw MangoError.noUsableIndexForSort }
            var plan = MangoPlan(index: nil, reverse: query.descending)
            plan.idRange = idBounds(query.selector)
            plan.warning = warning ?? noIndexWarning
            return plan
        }
        var plan = MangoPlan(index: index, reverse: query.descending, warning: warning)
        (plan.lower, plan.upper) = bounds(query.selector.conditions(on: index.fields[0]))
        return plan
    }

    /// How many of the index's leading fields the selector constrains.
    static func rank(_ index: MangoIndexDefinition, _ query: MangoQuery) -> Int {
        var count = 0
        for field in index.fields {
            guard !query.selector.conditions(on: field).isEmpty else { break }
            count += 1
        }
        return count * 100 + index.fields.count
    }

    static func sortFits(_ query: MangoQuery, _ index: MangoIndexDefinition) -> Bool {
        guard !query.sort.isEmpty else { return true }
        if index.fields.starts(with: query.sort) { return true }
        let fixed = index.fields.prefix { field in
            query.selector.conditions(on: field).contains { if case .eq = $0 { true } else { false } }
        }
        return index.fields.dropFirst(fixed.count).starts(with: query.sort)
    }

    /// Sort-key bounds of the index rows whose first element satisfies `conditions`.
    static func bounds(_ conditions: [MangoCondition]) -> ([UInt8]?, [UInt8]?) {
        var low: (JSON, inclusive: Bool)?
        var high: (JSON, inclusive: Bool)?
        func raise(_ value: JSON, _ inclusive: Bool) {
            if let current = low {
                let order = ViewCollation.compare(value, current.0)
                if order == .orderedAscending || (order == .orderedSame && inclusive) { return }
            }
            low = (value, inclusive)
        }
        func lower(_ value: JSON, _ inclusive: Bool) {
            if let current = high {
                let order = ViewCollation.compare(value, current.0)
                if order == .orderedDescending || (order == .orderedSame && inclusive) { return }
            }
            high = (value, inclusive)
        }
        for condition in conditions {
            switch condition {
            case .eq(let value): raise(value, true); lower(value, true)
            case .gt(let value): raise(value, false)
            case .gte(let value): raise(value, true)
            case .lt(let value): lower(value, false)
            case .lte(let value): lower(value, true)
            default: continue
            }
        }
        // Every key whose first element is X starts with arrayPrefix([X]) and continues
        // with a tag or the end byte (both < 0xFF).
        let lowerKey = low.map { ViewCollation.arrayPrefix([$0.0][...]) + ($0.inclusive ? [] : [0xFF]) }
        let upperKey = high.map { ViewCollation.arrayPrefix([$0.0][...]) + ($0.inclusive ? [0xFF] : []) }
        return (lowerKey, upperKey)
    }

    /// Inclusive `_id` bounds from string conditions on `_id` (a superset of the matches).
    static func idBounds(_ selector: MangoSelector) -> (String?, String?) {
        var low: String?
        var high: String?
        for condition in selector.conditions(on: idField) {
            switch condition {
            case .eq(.string(let id)): low = max(low ?? id, id); high = min(high ?? id, id)
            case .gt(.string(let id)), .gte(.string(let id)): low = max(low ?? id, id)
            case .lt(.string(let id)), .lte(.string(let id)): high = min(high ?? id, id)
            default: continue
            }
        }
        return (low, high)
    }

    /// What `_explain` says about the plan.
    public func explanation(_ query: MangoQuery, database: String) -> JSON {
        let index: JSON = self.index?.listingJSON
            ?? ["ddoc": .null, "name": "_all_docs", "type": "special", "def": ["fields": [["_id": "asc"]]]]
        var out: [String: JSON] = [
            "dbname": .string(database), "index": index, "selector": query.selectorJSON,
            "opts": [
                "limit": .int(Int64(query.limit)), "skip": .int(Int64(query.skip)),
                "sort": .object(Dictionary(uniqueKeysWithValues: query.sort.map { ($0.description, .string(query.descending ? "desc" : "asc")) })),
                "fields": query.fields.map { .array($0.map { .string($0.description) }) } ?? "all_fields",
                "use_index": query.useIndex.map { .array([.string($0.ddoc)] + ($0.name.map { [.string($0)] } ?? [])) } ?? [],
            ],
            "limit": .int(Int64(query.limit)), "skip": .int(Int64(query.skip)),
            "fields": query.fields.map { .array($0.map { .string($0.description) }) } ?? "all_fields",
            "range": [
                "start_key": lower.map { .string(Digests.hex($0)) } ?? .null,
                "end_key": upper.map { .string(Digests.hex($0)) } ?? .null,
                "direction": reverse ? "rev" : "fwd",
            ],
        ]
        if let warning { out["warning"] = .string(warning) }
        return .object(out)
    }
}
