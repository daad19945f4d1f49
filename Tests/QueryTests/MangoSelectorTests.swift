import DocumentModel
import Foundation
@testable import Query
import Testing

/// Mango selectors: parsing, normalization, every operator, table-driven.
@Suite struct MangoSelectorTests {
    static let doc: JSON = [
        "_id": "task1", "type": "task", "complete": false, "n": 7, "price": 2.5, "name": "Buy milk",
        "tags": ["home", "shop"], "address": ["city": "Paris", "zip": "75001"], "nothing": .null,
        "scores": [3, 8, 12], "items": [["sku": "a", "qty": 2], ["sku": "b", "qty": 5]],
        "dotted.key": "yes",
    ]

    static func parse(_ text: String) throws -> MangoSelector {
        try MangoSelector(try JSON.parse(text))
    }

    static let cases: [(String, Bool)] = [
        (#"{}"#, true),
        (#"{"type": "task"}"#, true),
        (#"{"type": "list"}"#, false),
        (#"{"type": {"$eq": "task"}, "complete": false}"#, true),
        (#"{"n": {"$gt": 5, "$lt": 10}}"#, true),
        (#"{"n": {"$gte": 7, "$lte": 7}}"#, true),
        (#"{"n": {"$gt": 7}}"#, false),
        (#"{"n": {"$ne": 7}}"#, false),
        (#"{"missing": {"$ne": 7}}"#, false),
        (#"{"n": {"$lt": "a"}}"#, true),
        (#"{"name": {"$gt": 5}}"#, true),
        (#"{"nothing": null}"#, true),
        (#"{"nothing": {"$type": "null"}}"#, true),
        (#"{"price": {"$type": "number"}, "tags": {"$type": "array"}, "address": {"$type": "object"}}"#, true),
        (#"{"missing": {"$exists": false}}"#, true),
        (#"{"n": {"$exists": false}}"#, false),
        (#"{"address": {"city": "Paris"}}"#, true),
        (#"{"address.city": "Paris"}"#, true),
        (#"{"address.city": {"$in": ["Lyon", "Paris"]}}"#, true),
        (#"{"address.city": {"$nin": ["Lyon", "Paris"]}}"#, false),
        (#"{"tags": {"$in": ["shop"]}}"#, true),
        (#"{"tags": {"$all": ["shop", "home"]}}"#, true),
        (#"{"tags": {"$all": ["shop", "work"]}}"#, false),
        (#"{"tags": {"$size": 2}}"#, true),
        (#"{"tags": ["home", "shop"]}"#, true),
        (#"{"tags": ["shop", "home"]}"#, false),
        (#"{"n": {"$mod": [3, 1]}}"#, true),
        (#"{"price": {"$mod": [2, 0]}}"#, false),
        (#"{"name": {"$regex": "^Buy"}}"#, true),
        (#"{"name": {"$regex": "milk$"}}"#, true),
        (#"{"name": {"$regex": "^milk"}}"#, false),
        (#"{"scores": {"$elemMatch": {"$gt": 10}}}"#, true),
        (#"{"scores": {"$allMatch": {"$gt": 2}}}"#, true),
        (#"{"scores": {"$allMatch": {"$gt": 3}}}"#, false),
        (#"{"items": {"$elemMatch": {"sku": "b", "qty": {"$gte": 5}}}}"#, true),
        (#"{"items": {"$elemMatch": {"sku": "a", "qty": {"$gte": 5}}}}"#, false),
        (#"{"$or": [{"type": "list"}, {"n": 7}]}"#, true),
        (#"{"$and": [{"type": "task"}, {"n": 8}]}"#, false),
        (#"{"$nor": [{"type": "list"}, {"n": 8}]}"#, true),
        (#"{"$not": {"type": "task"}}"#, false),
        (#"{"n": {"$not": {"$gt": 10}}}"#, true),
        (#"{"dotted\\.key": "yes"}"#, true),
        (#"{"_id": {"$gt": "task0"}}"#, true),
    ]

    @Test(arguments: cases)
    func selectorMatches(_ selector: String, _ expected: Bool) throws {
        #expect(try Self.parse(selector).matches(Self.doc) == expected, "\(selector)")
    }

    @Test(arguments: [
        (#"{"n": {"$foo": 1}}"#, "invalid_operator"),
        (#"{"$foo": 1}"#, "invalid_operator"),
        (#"{"n": {"$in": 3}}"#, "invalid_selector"),
        (#"{"n": {"$exists": 1}}"#, "invalid_selector"),
        (#"{"n": {"$type": "integer"}}"#, "invalid_selector"),
        (#"{"n": {"$mod": [0, 1]}}"#, "invalid_selector"),
        (#"{"n": {"$regex": "("}}"#, "invalid_selector"),
        (#"{"$or": {"a": 1}}"#, "invalid_selector"),
        (#"{"n": {"$gt": 1, "x": 2}}"#, "invalid_selector"),
        (#"[1]"#, "invalid_selector"),
    ])
    func badSelectorsAreRejected(_ selector: String, _ error: String) throws {
        #expect(throws: MangoError.self) { try Self.parse(selector) }
        do {
            _ = try Self.parse(selector)
        } catch let failure as MangoError {
            #expect(failure.error == error, "\(selector): \(failure)")
            #expect(failure.status == 400)
        }
    }

    @Test func requiredFieldsAndConditions() throws {
        let selector = try Self.parse(#"{"type": "task", "n": {"$gt": 1}, "x": {"$exists": false}, "$or": [{"a": 1}]}"#)
        #expect(selector.requiredFields == [MangoField(["type"]), MangoField(["n"])])
        #expect(selector.conditions(on: MangoField(["n"])) == [.gt(1)])
    }

    @Test func queriesParseSortFieldsAndPaging() throws {
        let query = try MangoQuery(try JSON.parse(#"""
            {"selector": {"type": "task"}, "fields": ["_id", "address.city"], "sort": [{"createdAt": "desc"}],
             "limit": 10, "skip": 2, "use_index": ["by-created", "created"], "execution_stats": true}
            """#).objectValue!)
        #expect(query.sort == [MangoField(["createdAt"])])
        #expect(query.descending)
        #expect(query.limit == 10 && query.skip == 2)
        #expect(query.useIndex?.ddoc == "_design/by-created" && query.useIndex?.name == "created")
        let projected = query.project(Self.doc.objectValue!)
        #expect(projected == ["_id": "task1", "address": ["city": "Paris"]])
        #expect(throws: MangoError.self) {
            try MangoQuery(try JSON.parse(#"{"selector": {}, "sort": [{"a": "asc"}, {"b": "desc"}]}"#).objectValue!)
        }
        #expect(throws: MangoError.self) { try MangoQuery(["fields": ["a"]]) }
    }

    @Test func planPicksTheIndexThatFitsAndItsRange() throws {
        let byCreated = MangoIndexDefinition(ddoc: "_design/c", name: "created", fields: [MangoField(["createdAt"])], partialFilter: nil)
        let byType = MangoIndexDefinition(
            ddoc: "_design/t", name: "type-created", fields: [MangoField(["type"]), MangoField(["createdAt"])], partialFilter: nil)
        let query = try MangoQuery(try JSON.parse(#"""
            {"selector": {"type": "task", "complete": false}, "sort": ["createdAt"]}
            """#).objectValue!)
        let plan = try MangoPlan.choose(query, indexes: [byCreated, byType])
        #expect(plan.index == byType)   // type is fixed by $eq, so its createdAt order is the sort
        #expect(plan.lower == ViewCollation.arrayPrefix(["task"]))
        #expect(plan.upper == ViewCollation.arrayPrefix(["task"]) + [0xFF])
        // Without an index on the sort field there is no plan.
        #expect(throws: MangoError.self) {
            try MangoPlan.choose(query, indexes: [MangoIndexDefinition(ddoc: "_design/x", name: "x", fields: [MangoField(["x"])], partialFilter: nil)])
        }
        // No usable index: a scan of _all_docs, with CouchDB's warning.
        let scan = try MangoPlan.choose(try MangoQuery(["selector": ["name": "x"]]), indexes: [byType])
        #expect(scan.index == nil)
        #expect(scan.warning == MangoPlan.noIndexWarning)
    }

    @Test func rangeBoundsContainExactlyTheMatchingKeys() throws {
        let keys: [JSON] = [.null, false, true, -1, 0, 1, 1.5, 2, "a", "b", ["x"], ["y": 1]]
        let conditionSets: [[MangoCondition]] = [
            [.gt(1)], [.gte(1)], [.lt(2)], [.lte(2)], [.gt(0), .lt(2)], [.eq("a")], [.gte("a"), .lte("b")], [.eq(1.0)],
        ]
        for conditions in conditionSets {
            let (lower, upper) = MangoPlan.bounds(conditions)
            for key in keys {
                let sortKey = ViewCollation.sortKey([key, "tail"])
                let inRange = (lower.map { ViewCollation.compare(sortKey, $0) != .orderedAscending } ?? true)
                    && (upper.map { ViewCollation.compare(sortKey, $0) == .orderedAscending } ?? true)
                let matches = conditions.allSatisfy { $0.matches(key) }
                #expect(inRange == matches, "\(conditions) \(key)")
            }
        }
    }
}
