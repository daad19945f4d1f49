import DocumentModel
import DocumentStore
import Synchronization

/// What one database knows about which of its revisions its mesh peers hold, shared by
/// all of its connections (docs/architecture.md §10.10 "Offers as knowledge"):
///
/// - **Arrivals.** For each revision received by replication (document and revision ID):
///   the store it came from (the peer's store UUID), its sequence in that store's feed,
///   and the connection it came over. Recorded before the revision's commit, so that no
///   feed reads the revision before its arrival. Kept by a hash of the revision (this
///   process's `Hasher`) for the last `arrivalCapacity` revisions; a forgotten revision
///   is offered as before.
/// - **Coverage.** For each source store, the sequences of its feed whose whole entry
///   this database holds (`SequenceRanges`): every revision the entry offered was stored,
///   or was already here. Each connection to a Shoal peer reports what was added since
///   its last report (`shoal/covered`, `ReplicationSession+Coverage.swift`).
///
/// A peer that covers a source's sequence `s` holds every revision that source's change
/// at `s` held; a revision that arrived here from that change is not offered to it. Both
/// sides are in memory only: after a restart the node offers everything again, which is
/// never wrong.
final class MeshKnowledge: Sendable {
    /// Where a revision stored at some local sequence came from.
    struct Arrival: Sendable, Equatable {
        /// The source store (`source(_:)`), or 0 when the connection had not named it yet.
        var source: UInt32
        /// The revision's sequence in the source's feed (the `rev`'s `sequence`).
        var sequence: UInt64
        /// The connection it came over (`PeerCoverage.serial`).
        var link: UInt32
    }

    private struct State {
        /// Arrivals by revision key, and the keys in the order they were recorded (from
        /// `head` on): the oldest are forgotten first.
        var arrivals: [Int: Arrival] = [:]
        var order: [Int] = []
        var head = 0
        var sources: [String: UInt32] = [:]
        var names: [String] = [""]
        /// This database's coverage of each source (by `source(_:)`).
        var covered: [UInt32: SequenceRanges] = [:]
        /// What each reporting connection has yet to tell its peer (by connection serial).
        var outboxes: [UInt32: [UInt32: SequenceRanges]] = [:]
        /// The peer store of each connection that named it (arrivals recorded before it
        /// did are resolved through this).
        var linkSources: [UInt32: UInt32] = [:]
        /// Connections receiving each source's feed now (`follow`/`unfollow`).
        var live: [UInt32: Int] = [:]
        /// Moves on whenever `live` changes a source's presence.
        var liveGeneration: UInt64 = 0
    }

    /// Arrivals remembered (the most recent revisions').
    static let arrivalCapacity = 1 << 17
    /// Ranges kept per source, here and per peer.
    static let rangeLimit = 1 << 14

    private let state = Mutex(State())
    /// Moves on whenever coverage grows (reporters wake on it).
    let changed = ChangeSignal()

    private static let registry = StoreRegistry { MeshKnowledge() }

    /// The knowledge of `store`'s connections.
    static func of(_ store: DocumentStore) -> MeshKnowledge {
        registry.value(for: store)
    }

    /// A small number naming the store `uuid` in this process (never 0).
    func source(_ uuid: String) -> UInt32 {
        state.withLock { state in
            if let known = state.sources[uuid] { return known }
            let number = UInt32(state.names.count)
            state.sources[uuid] = number
            state.names.append(uuid)
            return number
        }
    }

    /// The key a revision's arrival is kept under: a hash of its document and revision ID
    /// (never 0). Two revisions with one key (one chance in 2^64 per pair) would share an
    /// arrival; the key names nothing outside this process.
    static func key(docID: String, rev: RevID) -> Int {
        var hasher = Hasher()
        hasher.combine(docID)
        hasher.combine(rev.description)
        let key = hasher.finalize()
        return key == 0 ? 1 : key
    }

    /// Records where these revisions (by `key`) came from.
    func recordArrivals(_ arrivals: [(key: Int, arrival: Arrival)]) {
        guard !arrivals.isEmpty else { return }
        state.withLock { state in
            for (key, arrival) in arrivals where state.arrivals.updateValue(arrival, forKey: key) == nil {
                state.order.append(key)
            }
            while state.arrivals.count > Self.arrivalCapacity, state.head < state.order.count {
                state.arrivals.removeValue(forKey: state.order[state.head])
                state.head += 1
            }
            if state.head > Self.arrivalCapacity / 2 {
                state.order.removeFirst(state.head)
                state.head = 0
            }
        }
    }

    /// The arrival of each revision (by `key`; nil: not received by replication, or forgotten).
    func arrivals(_ keys: [Int]) -> [Arrival?] {
        state.withLock { state in
            keys.map { key in
                guard var arrival = state.arrivals[key] else { return nil }
                if arrival.source == 0 { arrival.source = state.linkSources[arrival.link] ?? 0 }
                return arrival
            }
        }
    }

    /// Connection `link`'s peer named its store: `source`.
    func name(link: UInt32, source: UInt32) {
        state.withLock { $0.linkSources[link] = source }
    }

    /// A connection now receives `source`'s feed (`unfollow` when it ends): reported as
    /// live, with what is covered of it, even before anything is, so that peers know
    /// revisions from there may be coming here.
    func follow(source: UInt32) {
        guard source != 0 else { return }
        state.withLock { state in
            if state.covered[source] == nil {
                state.covered[source] = SequenceRanges(limit: Self.rangeLimit)
                for serial in state.outboxes.keys where state.outboxes[serial]![source] == nil {
                    state.outboxes[serial]![source] = SequenceRanges(limit: Self.rangeLimit)
                }
            }
            state.live[source, default: 0] += 1
            if state.live[source] == 1 { state.liveGeneration &+= 1 }
        }
        changed.notify()
    }

    /// A connection that followed `source` ended.
    func unfollow(source: UInt32) {
        guard source != 0 else { return }
        let gone = state.withLock { state -> Bool in
            guard let count = state.live[source] else { return false }
            if count > 1 {
                state.live[source] = count - 1
                return false
            }
            state.live[source] = nil
            state.liveGeneration &+= 1
            return true
        }
        if gone { changed.notify() }
    }

    /// The source stores some connection receives from now, and a number that moves on
    /// whenever that set changes.
    func liveSources() -> (uuids: [String], generation: UInt64) {
        state.withLock { state in (state.live.keys.map { state.names[Int($0)] }.sorted(), state.liveGeneration) }
    }

    /// This database now holds the whole entries at `sequences` of `source`'s feed.
    func cover(source: UInt32, _ sequences: [UInt64]) {
        guard source != 0, !sequences.isEmpty else { return }
        state.withLock { state in
            for sequence in sequences {
                state.covered[source, default: SequenceRanges(limit: Self.rangeLimit)].insert(sequence)
                for serial in state.outboxes.keys {
                    state.outboxes[serial]![source, default: SequenceRanges(limit: Self.rangeLimit)].insert(sequence)
                }
            }
        }
        changed.notify()
    }

    /// This database now holds the whole entries of `source`'s feed in `ranges`.
    func cover(source: UInt32, ranges: SequenceRanges) {
        guard source != 0, !ranges.isEmpty else { return }
        state.withLock { state in
            state.covered[source, default: SequenceRanges(limit: Self.rangeLimit)].formUnion(ranges)
            for serial in state.outboxes.keys {
                state.outboxes[serial]![source, default: SequenceRanges(limit: Self.rangeLimit)].formUnion(ranges)
            }
        }
        changed.notify()
    }

    /// Starts a reporter for connection `serial`: returns everything covered so far (its
    /// first report); later growth collects in its outbox (`takeReport`).
    func openReport(serial: UInt32) -> [String: SequenceRanges] {
        state.withLock { state in
            state.outboxes[serial] = [:]
            return Self.named(state.covered, names: state.names)
        }
    }

    /// Everything covered now, by source store.
    func snapshot() -> [String: SequenceRanges] {
        state.withLock { state in Self.named(state.covered, names: state.names) }
    }

    /// What coverage grew by since the last call, by source store.
    func takeReport(serial: UInt32) -> [String: SequenceRanges] {
        state.withLock { state in
            guard let outbox = state.outboxes[serial], !outbox.isEmpty else { return [:] }
            state.outboxes[serial] = [:]
            return Self.named(outbox, names: state.names)
        }
    }

    func closeReport(serial: UInt32) {
        _ = state.withLock { $0.outboxes.removeValue(forKey: serial) }
    }

    /// This database's coverage of `uuid`'s feed (tests, diagnostics).
    func coverage(of uuid: String) -> SequenceRanges {
        state.withLock { state in state.sources[uuid].flatMap { state.covered[$0] } ?? SequenceRanges() }
    }

    private static func named(_ ranges: [UInt32: SequenceRanges], names: [String]) -> [String: SequenceRanges] {
        var result: [String: SequenceRanges] = [:]
        for (source, covered) in ranges { result[names[Int(source)]] = covered }
        return result
    }
}
