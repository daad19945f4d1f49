import DocumentModel
import Foundation
import GRDB

// Version vectors of stored revisions (docs/architecture.md §10.9, docs/storage.md
// "Versions"): each revision's vector is kept beside its body (`docs.vv` for the winner,
// `revs.vv` for the others) in Sync Gateway's text form; NULL means the revision's
// legacy version alone (`Version.legacy(revID:)`), which is what every revision written
// before the `v8-versions` migration reads as, so an upgrade rewrites no row.

extension DocumentStore {
    /// The source ID of the versions this database mints (fixed at creation or upgrade).
    public var versionSource: SourceID { versionClock.source }

    /// The last time the database's hybrid logical clock gave out or observed.
    public var versionClockTime: UInt64 { versionClock.last }

    /// Replaces the wall clock (ns since 1970) that feeds the hybrid logical clock: for
    /// tests and clock faults. The hybrid clock never goes backwards whatever it reads.
    public func setWallClock(_ now: @escaping @Sendable () -> UInt64) {
        versionClock.setWallClock(now)
    }

    /// The version vector of `rev` (nil: the winner) of `docID`; nil when the document
    /// or the revision is unknown. A revision whose body is gone (compacted, or a
    /// placeholder of a history) reads as its legacy version.
    public func versionVector(_ docID: String, rev: RevID? = nil) async throws(StoreError) -> VersionVector? {
        try await read { db in
            guard let row = try DocumentRow.load(db, key: docID) else { return nil }
            return try Self.storedVector(db, row, of: rev ?? row.tree.winner)
        }
    }

    /// For each of `docIDs` the store holds: its revision tree and its winner's vector as
    /// a version-vector peer is shown it (`winnerVectorOverLeaves`), in one read (a
    /// version-vector peer's `proposeChanges`, a `changes` page).
    public func winnerVersions(_ docIDs: [String]) async throws(StoreError) -> [String: WinnerVersion] {
        try await read { db in
            var found: [String: WinnerVersion] = [:]
            for docID in Set(docIDs) {
                guard let row = try DocumentRow.load(db, key: docID), let vector = try Self.winnerVectorOverLeaves(db, row)
                else { continue }
                found[docID] = WinnerVersion(tree: row.tree, vector: vector)
            }
            return found
        }
    }

    /// The vector a version-vector peer (Couchbase Lite 4, Sync Gateway 4) is shown for
    /// `row`'s winner, and what its edits must continue: the stored vector, with the
    /// versions of the document's other leaves (the branches a resolution closed) in its
    /// history. A client that holds one of those branches then takes the resolution as
    /// its successor instead of a conflict it would resolve again against the mesh.
    static func winnerVectorOverLeaves(_ db: Database, _ row: DocumentRow) throws -> VersionVector? {
        guard let winner = row.tree.winner, let vector = try storedVector(db, row, of: winner) else { return nil }
        guard row.tree.leaves.count > 1 else { return vector }
        let others = try row.tree.leaves.filter { $0 != winner }.compactMap { try storedVector(db, row, of: $0) }
        return (try? vector.withHistory(of: others)) ?? vector
    }

    /// The current version of `docID`'s winning revision, or nil for an unknown document.
    public func currentVersion(_ docID: String) async throws(StoreError) -> Version? {
        try await versionVector(docID)?.current
    }

    // MARK: Stored form

    /// The vector stored as `text` for `revID` (nil text: the legacy version alone).
    static func vector(_ text: String?, revID: RevID) throws(StoreError) -> VersionVector {
        guard let text else { return VersionVector(Version.legacy(revID: revID)) }
        do {
            return try VersionVector(parsing: text)
        } catch {
            throw StoreError(.storage, reason: "corrupt version vector of \(revID): \(error)")
        }
    }

    /// The text stored for `vector` of `revID`: nil when it is the legacy version alone.
    static func storedText(_ vector: VersionVector, revID: RevID) -> String? {
        if vector.count == 1, vector.current.isLegacy, vector.current == Version.legacy(revID: revID) { return nil }
        return vector.text(style: .syncGateway)
    }

    /// `storedText(_:revID:)`, or the text the update's vector came in when the vector
    /// to store is exactly that one (a Shoal peer's `shoal-vv`: no formatting per write).
    static func storedText(_ vector: VersionVector, revID: RevID, update: PreparedUpdate) -> String? {
        if let text = update.versionText, vector == update.version { return text }
        return storedText(vector, revID: revID)
    }

    /// The stored vector of `rev` in `row` (as loaded before the transaction changed
    /// it); nil when `rev` is nil or not in its tree.
    static func storedVector(_ db: Database, _ row: DocumentRow?, of rev: RevID?) throws -> VersionVector? {
        guard let rev, let row, let node = row.tree.node(for: rev) else { return nil }
        guard node.hasBody else { return VersionVector(Version.legacy(revID: rev)) }
        return try vector(row.vectorText(db, of: rev), revID: rev)
    }

    // MARK: Assignment (§10.9)

    /// A local edit's vector: a new version `<clock now>@<source>` on top of the
    /// parent's vector (nil: a new document).
    static func localVector(parent: VersionVector?, clock: VersionClock) throws -> VersionVector {
        let time = try clock.next(after: parent?.time(of: clock.source) ?? 0)
        guard let parent else { return VersionVector(Version(time: time, source: clock.source)) }
        do {
            return try parent.addingLocalEdit(source: clock.source, time: time)
        } catch {
            throw StoreError(.storage, reason: "cannot add a local version: \(error)")
        }
    }

    /// The vector of a revision that came without one (a revision-tree peer,
    /// `new_edits=false`): its legacy version, with the parent's vector as history.
    static func legacyVector(revID: RevID, parent: VersionVector?) -> VersionVector {
        let legacy = Version.legacy(revID: revID)
        guard let parent, let vector = try? parent.adding(legacy) else { return VersionVector(legacy) }
        return vector
    }

    /// What is stored for a revision that came with `incoming`: `reconciling` of the
    /// vector already stored for it (if any) and `incoming`; a new revision also takes
    /// its parent's vector as history.
    static func receivedVector(
        _ incoming: VersionVector, existing: VersionVector?, parent: VersionVector?
    ) throws -> VersionVector {
        do {
            var vector = try existing.map { try VersionVector.reconciling([$0, incoming]) } ?? incoming
            if existing == nil, let parent { vector = try vector.withHistory(of: [parent]) }
            return vector
        } catch {
            throw StoreError.badRequest("invalid version vector: \(error)")
        }
    }

    /// The vectors of a deterministic conflict resolution's revisions: each one is its
    /// parent leaf's vector `adding` `Version.derived(revID:after:)`, `after` being the
    /// newest time in that leaf's vector. A resolution revision's ID depends on its parent
    /// and body only (a tombstone's on its leaf alone), so two nodes that resolved the
    /// same conflict while seeing different sets of live leaves can write the same
    /// revision; its vector must then be the same too, so it depends on nothing else
    /// (no merge versions of the other leaves: a Couchbase Lite 4 client that held a
    /// losing leaf resolves the resolution against it itself, as with Sync Gateway 4).
    static func resolutionVectors(
        _ resolution: ConflictResolution, leaves: [RevID: VersionVector]
    ) throws -> [RevID: VersionVector] {
        var result: [RevID: VersionVector] = [:]
        do {
            for revision in resolution.revisions {
                guard let leaf = leaves[revision.parent] else { continue }
                result[revision.revID] = try leaf.adding(Version.derived(revID: revision.revID, after: leaf.newestTime))
            }
        } catch {
            throw StoreError(.storage, reason: "cannot derive the resolution's versions: \(error)")
        }
        return result
    }

    /// Inside a write transaction: replaces the stored vector of `rev`, a revision whose
    /// body `row` holds (the winner's in `docs`, another's in `revs`).
    static func updateStoredVector(_ db: Database, _ row: DocumentRow, rev: RevID, text: String?) throws {
        if rev == row.tree.winner {
            try db.cachedStatement(sql: "UPDATE \(Tables.docs) SET vv = ? WHERE id = ?").execute(arguments: [text, row.rowID])
        } else {
            try db.cachedStatement(sql: "UPDATE \(Tables.revs) SET vv = ? WHERE doc = ? AND rev = ?")
                .execute(arguments: [text, row.rowID, rev.description])
        }
    }
}

/// A document's revision tree and its winning revision's version vector.
public struct WinnerVersion: Sendable {
    public let tree: RevTree
    public let vector: VersionVector

    /// Whether `incoming`, a version-vector peer's new revision, continues this winner
    /// exactly (docs/architecture.md §10.9 rule 2): it holds the winner's current version,
    /// is not that version itself, and every version in it from another writer than its
    /// own current one is one the winner's vector holds too. A revision that also holds
    /// something the winner lacks was made on top of a revision this node has not seen:
    /// taken as the winner's child it would get another revision ID here than where that
    /// revision is, a false conflict once they meet, so it is refused (409) until the
    /// node has caught up.
    public func isContinued(by incoming: VersionVector) -> Bool {
        DocumentStore.continues(incoming, parent: vector)
    }
}

extension DocumentStore {
    /// See `WinnerVersion.isContinued(by:)`.
    static func continues(_ incoming: VersionVector, parent: VersionVector) -> Bool {
        guard incoming.current != parent.current, incoming.dominates(parent) else { return false }
        let writer = incoming.current.source
        return incoming.versions.allSatisfy { version in
            version.source == writer || (parent.time(of: version.source) ?? 0) >= version.time
        }
    }
}
