@testable import DocumentStore
import DocumentModel
import Foundation
import GRDB
import Synchronization
import Testing
import TestSupport

/// Version vectors stored with revisions (docs/architecture.md §10.9, docs/storage.md
/// "Versions"): assignment on every write path, determinism across stores, the upgrade
/// of a database written before versions, and the hybrid clock under wall-clock jumps.
@Suite struct VersionStoreTests {
    /// A wall clock a test moves by hand (ns since 1970).
    final class ManualClock: Sendable {
        let now = Mutex<UInt64>(1_700_000_000_000_000_000)
        func set(_ value: UInt64) { now.withLock { $0 = value } }
        func move(by delta: Int64) { now.withLock { $0 = UInt64(Int64($0) + delta) } }
    }

    /// Sends `rev` of `docID` from `source` to `target` as a version-carrying link would:
    /// body, tree history and the source's stored vector.
    static func send(_ docID: String, _ rev: RevID, from source: DocumentStore, to target: DocumentStore) async throws {
        let (meta, revision) = try await source.revision(docID, rev: rev)
        let vector = try #require(revision.version)
        _ = try await target.save(DocumentUpdate(
            docID: docID, body: revision.body ?? [:], deleted: revision.deleted,
            mode: .replicate(history: meta.tree.history(of: rev)), version: vector))
    }

    @Test func localWritesMintVersionsOfTheDatabaseSource() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let first = try await store.put("doc", ["n": 1])
        let v1 = try #require(first.version)
        #expect(v1.count == 1)
        #expect(v1.current.source == store.versionSource)
        let second = try await store.put("doc", ["n": 2], parent: first.revID)
        let v2 = try #require(second.version)
        #expect(v2.current.source == store.versionSource)
        #expect(v2.current.time > v1.current.time)
        #expect(v2.count == 1)  // the same source replaces its older entry
        #expect(v2.compare(to: v1) == .newer)
        #expect(try await store.versionVector("doc") == v2)
        #expect(try await store.versionVector("doc", rev: first.revID) == v1)
        #expect(try await store.currentVersion("doc") == v2.current)
        #expect(try await store.revision("doc").1.version == v2)
        // A delete is a local edit too.
        let deleted = try await store.put("doc", [:], parent: second.revID, deleted: true)
        #expect(deleted.version?.current.source == store.versionSource)
        #expect(try #require(deleted.version).compare(to: v2) == .newer)
        // The source is kept in the database, and the clock's last time with it.
        let reopened = try await TestStore.make(directory: test.directory)
        #expect(reopened.store.versionSource == store.versionSource)
        let deletedTime = try #require(deleted.version).current.time
        #expect(reopened.store.versionClockTime >= deletedTime)
        await reopened.store.close()
    }

    @Test func revisionsWithoutAVectorGetTheirLegacyVersion() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let one = RevID.compute(parent: nil, deleted: false, canonicalBody: RevisionBody.digestBody(["a": 1]))
        let result = try await store.replicate("doc", ["a": 1], history: [one.description])
        #expect(result.version == VersionVector(Version.legacy(revID: one)))
        #expect(try await store.currentVersion("doc") == Version.legacy(revID: one))
        // Stored as NULL: nothing but the legacy version.
        let stored = try await store.read { db in try String.fetchOne(db, sql: "SELECT vv FROM docs") }
        #expect(stored == nil)
        // A local edit on top, then a replicated child of it: legacy current version,
        // the parent's vector as history.
        let edit = try await store.put("doc", ["a": 2], parent: one)
        let local = try #require(edit.version)
        #expect(local.previous == [Version.legacy(revID: one)])
        let three = RevID.compute(parent: edit.revID, deleted: false, canonicalBody: RevisionBody.digestBody(["a": 3]))
        let replicated = try await store.replicate("doc", ["a": 3], history: [three.description, edit.revID.description])
        let vector = try #require(replicated.version)
        #expect(vector.current == Version.legacy(revID: three))
        #expect(vector.contains(local.current))
        #expect(try await store.versionVector("doc") == vector)
    }

    @Test func theSameRevisionByDifferentPathsHasTheSameVersion() async throws {
        let stores = try (0..<4).map { _ in try TestStore() }
        defer { stores.forEach { $0.destroy() } }
        let (a, b, c, d) = (stores[0].store, stores[1].store, stores[2].store, stores[3].store)
        let r1 = try await a.put("doc", ["n": 1])
        let r2 = try await a.put("doc", ["n": 2], parent: r1.revID)
        // A → B, child first (the parent arrives later as a placeholder's body).
        try await Self.send("doc", r2.revID, from: a, to: b)
        try await Self.send("doc", r1.revID, from: a, to: b)
        // A → C in order, then C → D (a relay).
        try await Self.send("doc", r1.revID, from: a, to: c)
        try await Self.send("doc", r2.revID, from: a, to: c)
        try await Self.send("doc", r1.revID, from: c, to: d)
        try await Self.send("doc", r2.revID, from: c, to: d)
        for store in [b, c, d] {
            #expect(try await store.versionVector("doc", rev: r2.revID) == r2.version)
            #expect(try await store.versionVector("doc", rev: r1.revID) == r1.version)
            #expect(try await store.currentVersion("doc") == r2.version?.current)
        }
        // A legacy revision stored with and without an explicit legacy vector.
        let legacy = RevID.compute(parent: nil, deleted: false, canonicalBody: RevisionBody.digestBody(["l": 1]))
        try await b.replicate("legacy", ["l": 1], history: [legacy.description])
        _ = try await c.save(DocumentUpdate(
            docID: "legacy", body: ["l": 1], mode: .replicate(history: [legacy]),
            version: VersionVector(Version.legacy(revID: legacy))))
        #expect(try await b.versionVector("legacy") == c.versionVector("legacy"))
    }

    @Test func oneRevisionWrittenOnTwoStoresConvergesToOneVector() async throws {
        let stores = try (0..<2).map { _ in try TestStore() }
        defer { stores.forEach { $0.destroy() } }
        let (a, b) = (stores[0].store, stores[1].store)
        // Identical edits: one revision ID, two versions.
        let onA = try await a.put("doc", ["same": true])
        let onB = try await b.put("doc", ["same": true])
        #expect(onA.revID == onB.revID)
        #expect(onA.version != onB.version)
        try await Self.send("doc", onA.revID, from: a, to: b)
        let bVector = try await b.versionVector("doc")
        _ = try await a.save(DocumentUpdate(
            docID: "doc", body: ["same": true], mode: .replicate(history: [onB.revID]), version: onB.version))
        let aVector = try await a.versionVector("doc")
        #expect(aVector == bVector)
        #expect(aVector == (try VersionVector.reconciling([onA.version!, onB.version!])))
    }

    /// Two stores holding the same conflict (same leaves, same vectors, received in a
    /// different order) resolve it to identical revisions and identical vectors.
    @Test(arguments: [ConflictPolicy.winner, .merge])
    func conflictResolutionsGetIdenticalDerivedVectors(policy: ConflictPolicy) async throws {
        let stores = try (0..<4).map { _ in try TestStore() }
        defer { stores.forEach { $0.destroy() } }
        let (writerA, writerB, one, two) = (stores[0].store, stores[1].store, stores[2].store, stores[3].store)
        let base = try await writerA.put("doc", ["type": "task", "name": "milk", "done": false])
        try await Self.send("doc", base.revID, from: writerA, to: writerB)
        let left = try await writerA.put("doc", ["type": "task", "name": "oat milk", "done": false], parent: base.revID)
        let right = try await writerB.put("doc", ["type": "task", "name": "milk", "done": true], parent: base.revID)
        for (store, order) in [(one, [writerA, writerB]), (two, [writerB, writerA])] {
            try await Self.send("doc", base.revID, from: writerA, to: store)
            for writer in order {
                let rev = writer === writerA ? left.revID : right.revID
                try await Self.send("doc", rev, from: writer, to: store)
            }
        }
        let policies = ConflictPolicies(default: policy)
        let outcomes = [
            try await one.resolveConflict(docID: "doc", policies: policies),
            try await two.resolveConflict(docID: "doc", policies: policies),
        ]
        let resolution = try #require(outcomes[0].resolution)
        #expect(outcomes[0] == outcomes[1])
        let treeOne = try #require(try await one.metadata("doc")).tree
        let treeTwo = try #require(try await two.metadata("doc")).tree
        #expect(treeOne.leaves == treeTwo.leaves)
        for rev in resolution.revisions.map(\.revID) {
            let v1 = try #require(try await one.versionVector("doc", rev: rev))
            let v2 = try #require(try await two.versionVector("doc", rev: rev))
            #expect(v1 == v2)
            #expect(v1.current.source == SourceID.derived(fromRevID: rev))
            #expect(v1.dominates(left.version!) || v1.dominates(right.version!))
        }
        if let merged = resolution.result {
            // A function of its parent leaf's vector and its ID alone (see resolutionVectors).
            let vector = try #require(try await one.versionVector("doc", rev: merged.revID))
            let parent = try #require(try await one.versionVector("doc", rev: merged.parent))
            #expect(vector == (try parent.adding(Version.derived(revID: merged.revID, after: parent.newestTime))))
            #expect(vector.merges.isEmpty)
        }
        #expect(try await one.currentVersion("doc") == two.currentVersion("doc"))
    }

    /// A tombstone's revision ID depends on its leaf alone, so a node that saw two of
    /// three conflicting leaves and one that saw all three write the same tombstone of the
    /// second leaf: it must get the same vector on both (found by the chaos run, where
    /// nodes differed in that revision's `_cv`).
    @Test(arguments: [ConflictPolicy.winner, .deletesWin, .merge])
    func aResolutionRevisionHasOneVectorWhateverLeavesItsNodeSaw(policy: ConflictPolicy) async throws {
        let stores = try (0..<5).map { _ in try TestStore() }
        defer { stores.forEach { $0.destroy() } }
        let writers = Array(stores[0..<3].map(\.store))
        let (one, two) = (stores[3].store, stores[4].store)
        let base = try await writers[0].put("doc", ["n": 0])
        var leaves: [RevID] = []
        for (index, writer) in writers.enumerated() {
            if index > 0 { try await Self.send("doc", base.revID, from: writers[0], to: writer) }
            leaves.append(try await writer.put("doc", ["n": .int(Int64(index + 1))], parent: base.revID).revID)
        }
        let policies = ConflictPolicies(default: policy)
        for store in [one, two] { try await Self.send("doc", base.revID, from: writers[0], to: store) }
        // One: two leaves, resolved; then the third, resolved again. Two: all three at once.
        for index in 0..<2 { try await Self.send("doc", leaves[index], from: writers[index], to: one) }
        _ = try await one.resolveConflict(docID: "doc", policies: policies)
        try await Self.send("doc", leaves[2], from: writers[2], to: one)
        _ = try await one.resolveConflict(docID: "doc", policies: policies)
        for index in 0..<3 { try await Self.send("doc", leaves[index], from: writers[index], to: two) }
        _ = try await two.resolveConflict(docID: "doc", policies: policies)
        let treeOne = try #require(try await one.metadata("doc")).tree
        let treeTwo = try #require(try await two.metadata("doc")).tree
        var shared = 0
        for rev in Set(treeOne.leaves).intersection(treeTwo.leaves) {
            shared += 1
            let v1 = try await one.versionVector("doc", rev: rev)
            let v2 = try await two.versionVector("doc", rev: rev)
            #expect(v1 == v2, "\(policy): \(rev): \(String(describing: v1)) / \(String(describing: v2))")
        }
        #expect(shared > 0)
    }

    /// A file written by the schema before versions (migrations up to `v7-collections`,
    /// rows inserted as that code wrote them) opens without a row rewritten and reads
    /// its revisions as their legacy versions; writes after the upgrade get vectors.
    @Test func aDatabaseFromBeforeVersionsOpensWithLegacyVersions() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = (directory.path as NSString).appendingPathComponent("db.sqlite3")
        let one = RevID.compute(parent: nil, deleted: false, canonicalBody: RevisionBody.digestBody(["old": 1]))
        let two = RevID.compute(parent: one, deleted: false, canonicalBody: RevisionBody.digestBody(["old": 2]))
        var built = RevTree()
        try built.insert(one, parent: nil, deleted: false, hasBody: true, sequence: 1)
        try built.insert(two, parent: one, deleted: false, hasBody: true, sequence: 2)
        let treeBytes = Data(built.serialized())
        let oneBody = JSON.object(["old": 1]).canonicalBytes(), twoBody = JSON.object(["old": 2]).canonicalBytes()
        do {
            let queue = try DatabaseQueue(path: path)
            try DocumentStore.migrator.migrate(queue, upTo: "v7-collections")
            try await queue.write { db in
                try db.execute(sql: """
                    INSERT INTO docs(key, seq, winner, deleted, conflicted, tree, body) VALUES ('doc', 2, ?, 0, 0, ?, ?);
                    INSERT INTO revs(doc, rev, body) VALUES (1, ?, ?);
                    UPDATE meta SET value = 2 WHERE key = 'last_seq';
                    UPDATE meta SET value = 1 WHERE key = 'doc_count';
                    INSERT INTO collections(id, scope, name) VALUES (1, 'app', 'things');
                    """, arguments: [two.description, treeBytes, Data(twoBody), one.description, Data(oneBody)])
                // A named collection's tables as they were before versions.
                try DocumentStore.createCollectionSchema(db, number: 1)
                try db.execute(sql: "ALTER TABLE c1_docs DROP COLUMN vv; ALTER TABLE c1_revs DROP COLUMN vv")
            }
            try queue.close()
        }
        let before = try Self.rows(path)

        let test = try await TestStore.make(directory: directory)
        defer { test.store.close() }
        let store = test.store
        #expect(try await store.versionVector("doc") == VersionVector(Version.legacy(revID: two)))
        #expect(try await store.versionVector("doc", rev: one) == VersionVector(Version.legacy(revID: one)))
        #expect(try await store.revision("doc").1.version == VersionVector(Version.legacy(revID: two)))
        #expect(try Self.rows(path) == before, "the upgrade rewrote no stored row")
        #expect(try await store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM docs WHERE vv IS NOT NULL") } == 0)
        // A local edit after the upgrade: a new version over the legacy one.
        let edit = try await store.put("doc", ["new": 3], parent: two)
        let vector = try #require(edit.version)
        #expect(vector.current.source == store.versionSource)
        #expect(vector.previous == [Version.legacy(revID: two)])
        // The named collection's old tables gained the column too.
        let things = try store.collection(try #require(CollectionName(scope: "app", name: "things")))
        let inCollection = try await things.put("x", ["in": "collection"])
        #expect(try await things.versionVector("x") == inCollection.version)
    }

    /// Every stored row of `docs` and `revs` (key/rev, tree, body), in order.
    static func rows(_ path: String) throws -> [[String]] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT key, hex(tree), hex(body) FROM docs ORDER BY id").map { [$0[0], $0[1], $0[2]] }
                + Row.fetchAll(db, sql: "SELECT rev, hex(body) FROM revs ORDER BY doc, rev").map { [$0[0], $0[1]] }
        }
    }

    @Test func localEditsStayMonotonicWhenTheWallClockJumpsBack() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let clock = ManualClock()
        test.store.setWallClock { clock.now.withLock { $0 } }
        var last = try #require(try await test.store.put("doc", ["n": 0]).version)
        var parent = try #require(try await test.store.metadata("doc")).winner
        #expect(last.current.time == clock.now.withLock { $0 } & ~HybridLogicalClock.counterMask)
        for step in 1...5 {
            clock.move(by: step % 2 == 0 ? 3_600_000_000_000 : -7_200_000_000_000)  // ±1–2 h jumps
            let edit = try await test.store.put("doc", ["n": .int(Int64(step))], parent: parent)
            let vector = try #require(edit.version)
            #expect(vector.current.time > last.current.time, "step \(step)")
            let other = try #require(try await test.store.put("other-\(step)", ["n": 1]).version)
            #expect(other.current.time > vector.current.time)
            (last, parent) = (other, edit.revID)
        }
        // After a restart with the wall clock a day behind, times still move forward.
        await test.store.close()
        let reopened = try await TestStore.make(directory: test.directory)
        defer { reopened.store.close() }
        clock.move(by: -86_400_000_000_000)
        reopened.store.setWallClock { clock.now.withLock { $0 } }
        let after = try #require(try await reopened.store.put("late", ["n": 1]).version)
        #expect(after.current.time > last.current.time)
    }

    @Test func aVectorClientEditMustDescendFromItsParent() async throws {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        let first = try await store.put("doc", ["n": 1])
        let client = SourceID(high: 7, low: 7)
        let v1 = try #require(first.version)
        // Descends from the parent's vector: accepted and kept as sent.
        let good = try v1.addingLocalEdit(source: client, time: v1.current.time + 1)
        let saved = try await store.save(DocumentUpdate(docID: "doc", body: ["n": 2], mode: .edit(parent: first.revID), version: good))
        #expect(saved.version == good)
        // Does not hold the parent's current version: a conflict, nothing stored.
        let stale = VersionVector(Version(time: v1.current.time + 5, source: SourceID(high: 9, low: 9)))
        await #expect(throws: StoreError.self) {
            try await store.save(DocumentUpdate(docID: "doc", body: ["n": 3], mode: .edit(parent: saved.revID), version: stale))
        }
        #expect(try await store.versionVector("doc") == good)
    }
}
