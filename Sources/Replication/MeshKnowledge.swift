import DocumentModel
import DocumentStore
import Synchronization

/// What one database knows about which of its revisions its mesh peers hold, shared by
/// all of its connections (docs/architecture.md §10.10 "Offers as knowledge"):
///
/// - **Arrivals.** For each local sequence a revision arrived at by replication: the
///   store it came from (the peer's store UUID), its sequence in that store's feed, and
///   the connection it came over. Kept in a ring of `arrivalCapacity` local sequences;
///   an older arrival is forgotten, and a forgotten revision is offered as before.
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

    private struct Slot {
        var local: UInt64 = 0
        var arrival = Arrival(source: 0, sequence: 0, link: 0)
    }

    private struct State {
        /// Ring of arrivals by local sequence (allocated on first use).
        var ring: [Slot] = []
        var sources: [String: UInt32] = [:]
        var names: [String] = [""]
        /// This database's coverage of each source (by `source(_:)`).
        var covered: [UInt32: SequenceRanges] = [:]
        /// What each reporting connection has yet to tell its peer (by connection serial).
        var outboxes: [UInt32: [UInt32: SequenceRanges]] = [:]
    }

    /// Arrivals remembered (local sequences, the most recent).
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

    /// Records where the revisions stored at these local sequences came from.
    func recordArrivals(_ arrivals: [(local: UInt64, arrival: Arrival)]) {
        guard !arrivals.isEmpty else { return }
        state.withLock { state in
            if state.ring.isEmpty { state.ring = Array(repeating: Slot(), count: Self.arrivalCapacity) }
            for (local, arrival) in arrivals {
                state.ring[Int(local % UInt64(Self.arrivalCapacity))] = Slot(local: local, arrival: arrival)
            }
        }
    }

    /// The arrival of each local sequence (nil: not by replication, or forgotten).
    func arrivals(_ locals: [UInt64]) -> [Arrival?] {
        state.withLock { state in
            guard !state.ring.isEmpty else { return Array(repeating: nil, count: locals.count) }
            return locals.map { local in
                let slot = state.ring[Int(local % UInt64(Self.arrivalCapacity))]
                return slot.local == local && local != 0 ? slot.arrival : nil
            }
        }
    }

    /// A connection now receives `source`'s feed: reported (with what is covered of it)
    /// even before anything is, so that peers know revisions from there may be coming here.
    func follow(source: UInt32) {
        guard source != 0 else { return }
        let added = state.withLock { state -> Bool in
            guard state.covered[source] == nil else { return false }
            state.covered[source] = SequenceRanges(limit: Self.rangeLimit)
            for serial in state.outboxes.keys where state.outboxes[serial]![source] == nil {
                state.outboxes[serial]![source] = SequenceRanges(limit: Self.rangeLimit)
            }
            return true
        }
        if added { changed.notify() }
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

    /// Starts a reporter for connection `serial`: returns everything covered so far (its
    /// first report); later growth collects in its outbox (`takeReport`).
    func openReport(serial: UInt32) -> [String: SequenceRanges] {
        state.withLock { state in
            state.outboxes[serial] = [:]
            return Self.named(state.covered, names: state.names)
        }
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
