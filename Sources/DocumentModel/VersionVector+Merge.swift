// Edits, merges, history unions and pruning of version vectors. All are pure functions of
// their arguments (times are passed in), so every node computes the same result.

extension VersionVector {
    /// The vector of a new revision written on top of this one with `version` as its
    /// current version (a local edit: `VersionVector::add` in couchbase-lite-core, Sync
    /// Gateway's `AddVersion` with `InvalidateMV`): the old current version and the merge
    /// versions become previous versions; an older entry of `version`'s source is dropped.
    /// Throws `.notNewer` when the vector already holds that source at that time or later.
    public func adding(_ version: Version) throws(VersionVectorError) -> VersionVector {
        if let existing = time(of: version.source), existing >= version.time {
            throw .notNewer(version, existing: existing)
        }
        var older = previous.filter { $0.source != version.source }
        if current.source != version.source { older.append(current) }
        older += merges.filter { $0.source != version.source && $0.source != current.source }
        return try VersionVector(current: version, previous: older)
    }

    /// The vector of a new local edit by `source` at hybrid time `time` (from
    /// `HybridLogicalClock.now(wall:after:)` with `after: time(of: source) ?? 0`).
    public func addingLocalEdit(source: SourceID, time: UInt64) throws(VersionVectorError) -> VersionVector {
        try adding(Version(time: time, source: source))
    }

    /// The vector of a revision that merges `vectors` under the new current version
    /// `version` (n-way `VersionVector::merge`; Sync Gateway's `MergeWithIncomingHLV`).
    /// The merge versions are the current versions of the inputs that no other input is
    /// newer than (one entry per source, at its newest time); when only one such input
    /// remains the result is a plain edit with no merge versions. Previous versions are
    /// the newest time of every other source in any input. The result depends only on
    /// the set of inputs (not their order or repetition) and is newer than every input;
    /// `times` of nested merges equals that of one flat merge (associativity).
    public static func merged(_ vectors: [VersionVector], as version: Version)
        throws(VersionVectorError) -> VersionVector
    {
        guard !vectors.isEmpty else { throw .noVectors }
        var summary = joinedTimes(vectors)
        if let existing = summary[version.source], existing >= version.time {
            throw .notNewer(version, existing: existing)
        }
        let heads = Set(vectors.filter { v in !vectors.contains { $0.compare(to: v) == .newer } }.map(\.current))
        var merges = [Version]()
        if Set(heads.map(\.source)).count > 1 {
            merges = Set(heads.map(\.source)).map { Version(time: summary[$0]!, source: $0) }
            for merge in merges where merge.source != version.source { summary[merge.source] = nil }
        }
        summary[version.source] = nil
        return try VersionVector(current: version, merges: merges,
                                 previous: summary.map { Version(time: $0.value, source: $0.key) })
    }

    /// This vector with every version the `others` know added to its history (Sync
    /// Gateway's `UpdateHistory`): used when the same revision arrives with a longer
    /// history, or to close a revision's vector over its ancestors' vectors. The current
    /// version stays; the merge versions stay unless another vector holds a newer time
    /// for one of their sources (then they become previous versions, as `InvalidateMV`).
    public func withHistory(of others: [VersionVector]) throws(VersionVectorError) -> VersionVector {
        let staleMerge = merges.contains { merge in
            merge.source != current.source && others.contains { ($0.time(of: merge.source) ?? 0) > merge.time }
        }
        return try Self.assemble(current: current, merges: staleMerge ? [] : merges,
                                 summary: Self.joinedTimes([self] + others))
    }

    /// One vector for one revision known under several vectors: the same revision
    /// reached a node by different paths, or the same revision ID was written on two
    /// nodes at once and got two versions. The current version is the greatest current
    /// version (by time, then source); the others fall into the history; merge versions
    /// survive only if every vector with that current version has the same ones and no
    /// vector holds a newer time for their sources. Commutative, associative, idempotent.
    public static func reconciling(_ vectors: [VersionVector]) throws(VersionVectorError) -> VersionVector {
        guard let first = vectors.first else { throw .noVectors }
        let current = vectors.map(\.current).reduce(first.current) {
            $1.time > $0.time || ($1.time == $0.time && $0.source < $1.source) ? $1 : $0
        }
        let sharing = vectors.filter { $0.current == current }
        var merges = sharing[0].merges
        if sharing.contains(where: { $0.merges != merges })
            || merges.contains(where: { merge in
                merge.source != current.source && vectors.contains { ($0.time(of: merge.source) ?? 0) > merge.time }
            })
        {
            merges = []
        }
        return try assemble(current: current, merges: merges, summary: joinedTimes(vectors))
    }

    /// The vector with its oldest previous versions removed
    /// (`VersionVector::prune` in couchbase-lite-core): current and merge versions always
    /// stay; previous versions are kept, newest first, until the vector holds `maxCount`
    /// versions; with `olderThan`, only previous versions older than that time are
    /// removed past that point (so more than `maxCount` may remain).
    public func pruned(keepingAtMost maxCount: Int, olderThan cutoff: UInt64? = nil) -> VersionVector {
        guard count > maxCount else { return self }
        let keepPrevious = max(0, maxCount - 1 - merges.count)
        let kept = previous.enumerated().filter { index, version in
            index < keepPrevious || (cutoff.map { version.time >= $0 } ?? false)
        }.map(\.element)
        return try! VersionVector(current: current, merges: merges, previous: kept)
    }

    /// The newest time of every source in any of `vectors` (the lattice join of their
    /// causal summaries: commutative, associative, idempotent).
    public static func joinedTimes(_ vectors: [VersionVector]) -> [SourceID: UInt64] {
        var result = [SourceID: UInt64]()
        for vector in vectors {
            for version in vector.versions { result[version.source] = max(result[version.source] ?? 0, version.time) }
        }
        return result
    }

    private static func assemble(current: Version, merges: [Version], summary: [SourceID: UInt64])
        throws(VersionVectorError) -> VersionVector
    {
        var summary = summary
        summary[current.source] = nil
        var keptMerges = [Version]()
        for merge in merges where merge.source == current.source || summary[merge.source] != nil {
            keptMerges.append(merge)
            if merge.source != current.source { summary[merge.source] = nil }
        }
        return try VersionVector(current: current, merges: keptMerges,
                                 previous: summary.map { Version(time: $0.value, source: $0.key) })
    }
}
