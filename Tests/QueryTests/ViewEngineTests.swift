import DocumentModel
import DocumentStore
import Foundation
import Query
import Testing
import TestSupport

/// Views over a real store: incremental indexing, deletes, map errors, changed
/// functions, cleanup, and stored reductions checked against a brute-force reduce.
@Suite struct ViewEngineTests {
    private func engine(_ test: TestStore) -> ViewEngine {
        ViewEngine(store: test.store, options: .init(timeout: .seconds(2), batchSize: 7, updatesInBackground: false))
    }

    private func rows(_ result: ViewResult) -> [JSON] {
        guard case .rows(_, _, let rows, _) = result else { return [] }
        return rows.map { ["id": .string($0.id), "key": $0.key, "value": $0.value] }
    }

    private func reduced(_ result: ViewResult) -> [ReducedRow] {
        guard case .reduced(let rows, _) = result else { return [] }
        return rows
    }

    @Test func indexesIncrementallyAndForgetsDeletedDocuments() async throws {
        let test = try await TestStore.make(inMemory: true)
        defer { test.destroy() }
        let store = test.store
        try await store.put("_design/app", ["views": ["byName": ["map": "function(doc) { if (doc.name) emit(doc.name, doc.n); }"]]])
        for i in 0..<20 { try await store.put("d\(i)", ["name": .string("n\(i % 5)"), "n": .int(Int64(i))]) }
        let views = engine(test)
        var query = ViewQuery()
        query.key = nil
        let first = try await views.query(design: "app", view: "byName", query: query)
        #expect(rows(first).count == 20)
        guard case .rows(let total, _, _, _) = first else { Issue.record("no rows"); return }
        #expect(total == 20)
        let index = try await views.index(design: "app", view: "byName")
        let builtAt = await index.sequence

        // Edits and deletes: only those documents are mapped again.
        let d0 = try await store.revision("d0").1.revID
        try await store.put("d0", ["name": "zz", "n": 100], parent: d0)
        let d1 = try await store.revision("d1").1.revID
        try await store.put("d1", [:], parent: d1, deleted: true)
        var zz = ViewQuery()
        zz.startKey = "zz"
        zz.endKey = "zz"
        let after = try await views.query(design: "app", view: "byName", query: zz)
        #expect(rows(after) == [["id": "d0", "key": "zz", "value": 100]])
        #expect(await index.sequence > builtAt)
        #expect(await index.rowCount == 19)
    }

    /// A document purged whole leaves no change behind; its rows and its part of the
    /// stored reductions must still go.
    @Test func purgedDocumentsLeaveTheIndex() async throws {
        let test = try await TestStore.make(inMemory: true)
        defer { test.destroy() }
        let store = test.store
        try await store.put("_design/app", ["views": ["v": ["map": "function(doc) { emit(doc.n, 1); }", "reduce": "_count"]]])
        for i in 0..<6 { try await store.put("d\(i)", ["n": .int(Int64(i))]) }
        let views = engine(test)
        var mapOnly = ViewQuery()
        mapOnly.reduce = false
        #expect(rows(try await views.query(design: "app", view: "v", query: mapOnly)).count == 6)
        _ = try await store.purge([(docID: "d2", revs: nil), (docID: "d4", revs: nil)])
        let left = rows(try await views.query(design: "app", view: "v", query: mapOnly)).map { $0["id"] }
        #expect(left == ["d0", "d1", "d3", "d5"])
        #expect(reduced(try await views.query(design: "app", view: "v", query: ViewQuery())) == [ReducedRow(key: .null, value: 4)])
    }

    /// Rows are found by the document's number: a document purged and stored again gets a
    /// new number, and a new document may get a purged one's number; neither may keep or
    /// lose the wrong rows.
    @Test func documentsPurgedAndStoredAgainKeepOnlyTheirNewRows() async throws {
        let test = try await TestStore.make(inMemory: true)
        defer { test.destroy() }
        let store = test.store
        try await store.put("_design/app", ["views": ["v": ["map": "function(doc) { emit(doc._id, doc.n); }"]]])
        for i in 0..<6 { try await store.put("d\(i)", ["n": .int(Int64(i))]) }
        let views = engine(test)
        #expect(rows(try await views.query(design: "app", view: "v", query: ViewQuery())).count == 6)
        // d5 has the highest number: a new document takes it again. d2 comes back under a new one.
        _ = try await store.purge([(docID: "d5", revs: nil), (docID: "d2", revs: nil)])
        try await store.put("e", ["n": 50])
        try await store.put("d2", ["n": 20])
        let after = rows(try await views.query(design: "app", view: "v", query: ViewQuery()))
        #expect(after.map { $0["id"] } == ["d0", "d1", "d2", "d3", "d4", "e"])
        #expect(after.map { $0["value"] } == [0, 1, 20, 3, 4, 50])
        #expect(await (try views.index(design: "app", view: "v")).rowCount == 6)
    }

    /// A document edited while an index is built from scratch is mapped twice in one
    /// update when its new sequence lands in the build's last batch: its first rows must
    /// go (the build skips row lookups only for documents it has not written yet).
    @Test func documentsEditedDuringAFirstBuildKeepOneRow() async throws {
        let test = try await TestStore.make(inMemory: true)
        defer { test.destroy() }
        let store = test.store
        try await store.put("_design/app", ["views": ["v": ["map": "function(doc) { emit(doc.n, null); }"]]])
        let count = 2_000
        _ = try await store.save(batch: (0..<count).map { i in
            DocumentUpdate(docID: "d\(i)", body: ["n": .int(Int64(i))], mode: .edit(parent: nil))
        })
        // Sequences 1 (the design) to 2001; batches of 2 are (1, 2) … (2001, 2002): the
        // last one also reads the edit below, made once d0 (sequence 2) is indexed.
        let views = ViewEngine(store: store, options: .init(timeout: .seconds(2), batchSize: 2, updatesInBackground: false))
        let index = try await views.index(design: "app", view: "v")
        let build = Task { try await index.update() }
        while await index.sequence < 2 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(await index.sequence < UInt64(count), "the build ended before the edit")
        let parent = try await store.revision("d0").1.revID
        try await store.put("d0", ["n": -1], parent: parent)
        try await build.value
        #expect(await index.sequence == UInt64(count + 2), "the last batch did not read the edit")
        var query = ViewQuery()
        query.update = .false
        let result = rows(try await views.query(design: "app", view: "v", query: query))
        #expect(result.count == count)
        #expect(result.filter { $0["id"] == "d0" }.map { $0["key"] } == [-1])
    }

    /// Indexes written before rows carried document numbers are emptied and rebuilt.
    @Test func indexesOfTheOlderFormatRebuild() async throws {
        let test = try await TestStore.make(inMemory: true)
        defer { test.destroy() }
        let store = test.store
        let map = "function(doc) { emit(doc.n, null); }"
        try await store.put("_design/app", ["views": ["v": ["map": .string(map)]]])
        for i in 0..<3 { try await store.put("d\(i)", ["n": .int(Int64(i))]) }
        let signature = ViewDefinition(map: map).signature
        let last = Int64(store.lastSequence)
        try await store.auxiliaryWrite { db in
            try db.execute(sql: """
                CREATE TABLE view_indexes (id INTEGER PRIMARY KEY, signature TEXT NOT NULL UNIQUE,
                    seq INTEGER NOT NULL DEFAULT 0, row_count INTEGER NOT NULL DEFAULT 0,
                    map_errors INTEGER NOT NULL DEFAULT 0, purge_seq INTEGER NOT NULL DEFAULT 0);
                CREATE TABLE view_rows (view INTEGER NOT NULL, sortkey BLOB NOT NULL, docid TEXT NOT NULL,
                    n INTEGER NOT NULL, key BLOB NOT NULL, value BLOB NOT NULL,
                    PRIMARY KEY (view, sortkey, docid, n)) WITHOUT ROWID;
                CREATE INDEX view_rows_by_doc ON view_rows(view, docid);
                """)
            try db.execute(sql: "INSERT INTO view_indexes(id, signature, seq, row_count) VALUES (1, ?, ?, 1)", arguments: [signature, last])
            try db.execute(sql: "INSERT INTO view_rows VALUES (1, x'01', 'stale', 0, x'6e756c6c', x'6e756c6c')")
        }
        let result = rows(try await engine(test).query(design: "app", view: "v", query: ViewQuery()))
        #expect(result.map { $0["id"] } == ["d0", "d1", "d2"])
    }

    @Test func mapErrorsSkipTheDocumentOnly() async throws {
        let test = try await TestStore.make(inMemory: true)
        defer { test.destroy() }
        try await test.store.put("_design/app", ["views": ["v": ["map": "function(doc) { emit(doc.a.b, null); }"]]])
        try await test.store.put("good", ["a": ["b": 1]])
        try await test.store.put("bad", ["x": 1])
        let views = engine(test)
        let result = try await views.query(design: "app", view: "v", query: ViewQuery())
        #expect(rows(result).map { $0["id"] } == ["good"])
        let index = try await views.index(design: "app", view: "v")
        #expect(await index.mapErrors == 1)
    }

    @Test func changedFunctionRebuildsAndCleanupDropsTheOldIndex() async throws {
        let test = try await TestStore.make(inMemory: true)
        defer { test.destroy() }
        let store = test.store
        let v1 = try await store.put("_design/app", ["views": ["v": ["map": "function(doc) { emit(doc.x, 1); }"]]])
        try await store.put("a", ["x": 1])
        let views = engine(test)
        #expect(rows(try await views.query(design: "app", view: "v", query: ViewQuery())).map { $0["key"] } == [1])
        try await store.put("_design/app", ["views": ["v": ["map": "function(doc) { emit(doc.x * 10, 1); }"]]], parent: v1.revID)
        #expect(rows(try await views.query(design: "app", view: "v", query: ViewQuery())).map { $0["key"] } == [10])
        #expect(try await views.cleanup().count == 1)
        #expect(try await views.cleanup().isEmpty)
        #expect(rows(try await views.query(design: "app", view: "v", query: ViewQuery())).map { $0["key"] } == [10])
    }

    @Test func missingDesignAndView() async throws {
        let test = try await TestStore.make(inMemory: true)
        defer { test.destroy() }
        try await test.store.put("_design/app", ["views": [:]])
        let views = engine(test)
        await #expect(throws: ViewError.missingDesign("missing")) { try await views.query(design: "nope", view: "v", query: ViewQuery()) }
        await #expect(throws: ViewError.missingView("v")) { try await views.query(design: "app", view: "v", query: ViewQuery()) }
    }

    /// Random documents, edits and deletes; every grouping and range of the stored
    /// reductions must equal a reduce computed from scratch.
    @Test(arguments: ["_count", "_sum", "_stats", "function(keys, values, rereduce) { return sum(values); }"])
    func storedReductionsMatchBruteForce(_ reduce: String) async throws {
        let test = try await TestStore.make(inMemory: true)
        defer { test.destroy() }
        let store = test.store
        let map = "function(doc) { emit([doc.a, doc.b, doc.c], doc.n); if (doc.c == 0) emit(doc.a, 1); }"
        try await store.put("_design/app", ["views": ["v": ["map": .string(map), "reduce": .string(reduce)]]])
        let views = engine(test)
        var generator = SplitMix64(seed: UInt64(reduce.count))
        var live: [String: (key: [Int], n: Int, rev: RevID)] = [:]
        for round in 0..<4 {
            for _ in 0..<30 {
                let id = "d\(Int.random(in: 0..<40, using: &generator))"
                if let existing = live[id], Bool.random(using: &generator) && round > 0 {
                    try await store.put(id, [:], parent: existing.rev, deleted: true)
                    live[id] = nil
                    continue
                }
                let key = [Int.random(in: 0..<3, using: &generator), Int.random(in: 0..<3, using: &generator), Int.random(in: 0..<2, using: &generator)]
                let n = Int.random(in: 1..<10, using: &generator)
                let written = try await store.put(id, ["a": .int(Int64(key[0])), "b": .int(Int64(key[1])), "c": .int(Int64(key[2])), "n": .int(Int64(n))], parent: live[id]?.rev)
                live[id] = (key, n, written.revID)
            }
            // Brute force: the emitted rows.
            var emitted: [(key: JSON, value: Int)] = []
            for doc in live.values {
                emitted.append((.array(doc.key.map { .int(Int64($0)) }), doc.n))
                if doc.key[2] == 0 { emitted.append((.int(Int64(doc.key[0])), 1)) }
            }
            for level in [0, 1, 2, 3] {
                var query = ViewQuery()
                query.groupLevel = level
                let got = reduced(try await views.query(design: "app", view: "v", query: query))
                #expect(got == expected(emitted, level: level, reduce: reduce), "level \(level) round \(round) \(reduce)")
                // A key range: only the rows with a >= 1.
                query.startKey = [1]
                query.endKey = [.int(9), [:]]
                let ranged = reduced(try await views.query(design: "app", view: "v", query: query))
                let inRange = emitted.filter { ViewCollation.compare($0.key, [1]) != .orderedAscending }
                #expect(ranged == expected(inRange, level: level, reduce: reduce), "range level \(level) \(reduce)")
            }
            var exact = ViewQuery()
            exact.group = true
            let got = reduced(try await views.query(design: "app", view: "v", query: exact))
            #expect(got == expected(emitted, level: 99, reduce: reduce))
        }
    }

    private func expected(_ rows: [(key: JSON, value: Int)], level: Int, reduce: String) -> [ReducedRow] {
        var groups: [(key: JSON, values: [Int])] = []
        for row in rows.sorted(by: { ViewCollation.less($0.key, $1.key) }) {
            var key = row.key
            if level == 0 { key = .null } else if case .array(let items) = key, items.count > level { key = .array(Array(items.prefix(level))) }
            if let last = groups.last, ViewCollation.compare(last.key, key) == .orderedSame {
                groups[groups.count - 1].values.append(row.value)
            } else {
                groups.append((key, [row.value]))
            }
        }
        return groups.map { group in
            let sum = group.values.reduce(0, +)
            let value: JSON
            switch reduce {
            case "_count": value = .int(Int64(group.values.count))
            case "_stats":
                value = [
                    "sum": .int(Int64(sum)), "count": .int(Int64(group.values.count)),
                    "min": .int(Int64(group.values.min()!)), "max": .int(Int64(group.values.max()!)),
                    "sumsqr": .int(Int64(group.values.map { $0 * $0 }.reduce(0, +))),
                ]
            default: value = .int(Int64(sum))
            }
            return ReducedRow(key: group.key, value: value)
        }
    }
}

extension ViewQuery {
    /// `key=` as a test shorthand (nil clears it).
    var key: JSON? {
        get { startKey == endKey ? startKey : nil }
        set { startKey = newValue; endKey = newValue }
    }
}
