/// A document revision's version vector (Couchbase Lite 4's `VersionVector`, Sync
/// Gateway 4's `HybridLogicalVector`): the current version that names the revision,
/// the merge versions (the current versions of the conflicting revisions it merged,
/// if it is a merge), and previous versions (the newest time of every other source
/// the revision descends from). Owns validation, order and comparison; text forms
/// are in `VersionVector+Text.swift`, edits and merges in `VersionVector+Merge.swift`.
///
/// Rules (the union of `VersionVector::validate` in couchbase-lite-core and
/// `extractHLVFromBlipString` in Sync Gateway): no source appears twice, except that
/// the current version's source may appear once among the merge versions with an
/// older time; merge and previous versions are kept in canonical order (newer first,
/// equal times by source, `Version.precedesInVector`), so equal vectors are equal
/// values whatever order a peer sent them in. `==` is this structural equality;
/// `compare(to:)` is the causal order.
public struct VersionVector: Sendable, Hashable, CustomStringConvertible {
    /// The version that identifies the revision.
    public let current: Version
    /// Current versions of the revisions this one merged; empty unless it is a merge.
    public let merges: [Version]
    /// The newest version of each other source this revision descends from.
    public let previous: [Version]

    /// Validates and orders the parts.
    public init(current: Version, merges: [Version] = [], previous: [Version] = []) throws(VersionVectorError) {
        if merges.isEmpty && previous.isEmpty {
            self = VersionVector(current)
            return
        }
        // Sources seen so far; a linear scan below a few dozen entries (no hashing, no
        // allocation of a set for the usual handful of writers).
        var seen: [SourceID] = [current.source]
        seen.reserveCapacity(1 + merges.count + previous.count)
        func insert(_ source: SourceID) -> Bool {
            guard !seen.contains(source) else { return false }
            seen.append(source)
            return true
        }
        var currentInMerges = false
        for merge in merges {
            if merge.source == current.source && !currentInMerges {
                guard merge.time < current.time else { throw .mergeVersionNotOlder(current: current, merge: merge) }
                currentInMerges = true
                continue
            }
            guard insert(merge.source) else { throw .duplicateSource(merge.source) }
        }
        for version in previous {
            guard insert(version.source) else { throw .duplicateSource(version.source) }
        }
        self.current = current
        self.merges = merges.sorted(by: Version.precedesInVector)
        self.previous = previous.sorted(by: Version.precedesInVector)
    }

    /// A vector of one version.
    public init(_ current: Version) {
        self.current = current
        self.merges = []
        self.previous = []
    }

    /// Every version: current, then merges, then previous.
    public var versions: [Version] { [current] + merges + previous }

    /// Number of versions.
    public var count: Int { 1 + merges.count + previous.count }

    /// Whether this revision merged a conflict.
    public var isMerge: Bool { !merges.isEmpty }

    /// The newest time the vector holds for `source`, or nil.
    public func time(of source: SourceID) -> UInt64? {
        if source == current.source { return current.time }
        if let merge = merges.first(where: { $0.source == source }) { return merge.time }
        return previous.first { $0.source == source }?.time
    }

    /// The newest time of every source: the vector as a causal summary.
    public var times: [SourceID: UInt64] {
        var result = [SourceID: UInt64]()
        for version in versions { result[version.source] = max(result[version.source] ?? 0, version.time) }
        return result
    }

    /// The greatest time anywhere in the vector.
    public var newestTime: UInt64 { versions.map(\.time).max()! }

    /// Whether the revision this vector names descends from (or is) the revision named
    /// by `version` (Sync Gateway's `DominatesSource`, `IsVersionKnown`).
    public func contains(_ version: Version) -> Bool {
        (time(of: version.source) ?? 0) >= version.time
    }

    /// How this vector's revision relates to the one named by `version` alone
    /// (`VersionVector::compareTo(const Version&)`): `.same` when it is the current
    /// version, `.newer` when the vector holds the source at that time or later,
    /// `.older` otherwise. Never `.conflicting`.
    public func compare(to version: Version) -> VersionOrder {
        guard let time = time(of: version.source), time >= version.time else { return .older }
        return time == version.time && current.source == version.source ? .same : .newer
    }

    /// The causal order of two revisions (`VersionVector::compareTo` in
    /// couchbase-lite-core; Sync Gateway's `IsInConflict` gives the same answers):
    /// each side's current version is looked up in the other. Same current version:
    /// `.same`. Otherwise the side that holds the other's current version is newer;
    /// when both or neither do, they conflict.
    public func compare(to other: VersionVector) -> VersionOrder {
        let mine = compare(to: other.current)
        if mine == .same { return .same }
        let theirs = other.compare(to: current)
        return mine == theirs ? .conflicting : mine
    }

    /// Checks what a peer sent: the current version must be newer than every other
    /// version but legacy ones (`Version.legacy(revID:)`, whose times are not clock
    /// times), as a hybrid logical clock that has seen them makes it.
    public func checkCausality() throws(VersionVectorError) {
        for version in merges + previous where !version.isLegacy && version.time >= current.time {
            throw .currentNotNewest(current: current, other: version)
        }
    }

    /// Whether this revision is the same as or descends from `other`'s.
    public func dominates(_ other: VersionVector) -> Bool {
        let order = compare(to: other)
        return order == .same || order == .newer
    }
}

/// How one revision relates to another (couchbase-lite-core's `versionOrder`).
public enum VersionOrder: Sendable, Hashable {
    case same, older, newer, conflicting

    /// The order seen from the other side.
    public var reversed: VersionOrder {
        switch self {
        case .older: .newer
        case .newer: .older
        case .same, .conflicting: self
        }
    }
}
