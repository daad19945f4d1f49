import BLIP
import DocumentModel
import Synchronization

/// What the Shoal peer of one connection told us it holds (`shoal/covered`), and the
/// connection's serial that arrivals over it are recorded with (`MeshKnowledge`).
///
/// Scoped to the connection, as `PeerRevisions` is: a peer that reconnects may have lost
/// its data under the same node ID, and starts again from nothing known.
///
/// `shoal/covered` (no reply): property `store`, the sender's store UUID; property `live`
/// (when it changed), the comma-separated UUIDs of the stores the sender receives from now;
/// body, a JSON object from source store UUID to the `SequenceRanges` text of that source's
/// feed the sender now covers besides what it reported before; under the sender's own
/// store, the entries of its feed the receiver holds by the sender's knowledge (every leaf
/// left out of the offers), which the receiver then covers. The first report of a
/// connection carries everything covered so far. A report that does not parse is dropped
/// whole.
final class PeerCoverage: Sendable {
    static let profile = "shoal/covered"

    private struct State {
        /// The peer's own store (`MeshKnowledge.source`), once it named it.
        var peerSource: UInt32 = 0
        var reported: [UInt32: SequenceRanges] = [:]
        /// The sources the peer receives from now (its last report's `live`).
        var live: Set<UInt32> = []
        /// Sequences the peer's reports covered, in all (grows with every report that adds).
        var coveredCount: UInt64 = 0
        /// This connection followed `peerSource` (`MeshKnowledge.follow`) and has not ended.
        var following = false
        /// Sequences of the peer's feed covered before it named its store.
        var pendingCover: [UInt64] = []
        /// Entries of our feed the peer holds by our knowledge (every leaf left out), not
        /// told yet.
        var yours = SequenceRanges(limit: MeshKnowledge.rangeLimit)
        var ended = false
    }

    private static let serials = Atomic<UInt32>(0)

    /// This connection's number in the process (never 0).
    let serial: UInt32
    let knowledge: MeshKnowledge
    private let state = Mutex(State())
    /// Moves on with every report received (tests).
    let heard = ChangeSignal()

    init(knowledge: MeshKnowledge) {
        self.knowledge = knowledge
        var serial: UInt32 = 0
        while serial == 0 { serial = Self.serials.add(1, ordering: .relaxed).newValue }
        self.serial = serial
    }

    /// Sequences the peer's reports covered so far (it moves on as the peer stores).
    var coveredCount: UInt64 { state.withLock { $0.coveredCount } }

    /// The peer's store, once it reported (0 before).
    var peerSource: UInt32 { state.withLock { $0.peerSource } }

    /// Records a report. False when it does not parse (nothing is recorded then).
    @discardableResult
    func record(_ message: BLIPMessage) -> Bool {
        guard let report = CoverageReport(
            store: message["store"], live: message["live"], body: message.body, limit: MeshKnowledge.rangeLimit)
        else { return false }
        let store = report.store
        var parsed: [(UInt32, SequenceRanges)] = []
        var ours = SequenceRanges(limit: MeshKnowledge.rangeLimit)
        for (uuid, ranges) in report.ranges {
            // Under the sender's own store: entries of its feed we hold, by its knowledge.
            if uuid == store { ours = ranges } else { parsed.append((knowledge.source(uuid), ranges)) }
        }
        let live = report.live.map { Set($0.map { knowledge.source($0) }) }
        let peer = knowledge.source(store)
        var pending: [UInt64] = []
        let follows = state.withLock { state -> Bool in
            if state.peerSource == 0 {
                pending = state.pendingCover
                state.pendingCover = []
            }
            state.peerSource = peer
            for (source, ranges) in parsed {
                state.reported[source, default: SequenceRanges(limit: MeshKnowledge.rangeLimit)].formUnion(ranges)
                state.coveredCount &+= ranges.count
            }
            if let live { state.live = live }
            guard !state.following, !state.ended else { return false }
            state.following = true
            return true
        }
        knowledge.name(link: serial, source: peer)
        if follows { knowledge.follow(source: peer) }
        knowledge.cover(source: peer, pending)
        if !ours.isEmpty { knowledge.cover(source: peer, ranges: ours) }
        heard.notify()
        return true
    }

    /// Entries of our feed (local sequences) every leaf of which the peer holds by our
    /// knowledge: told to it with the next report, so that it covers them too (it never
    /// saw them, so it could not count them itself).
    func peerHolds(_ sequences: [UInt64]) {
        guard !sequences.isEmpty else { return }
        state.withLock { state in
            for sequence in sequences { state.yours.insert(sequence) }
        }
        knowledge.changed.notify()
    }

    /// The entries of our feed to tell the peer it holds, since the last call.
    func takeYours() -> SequenceRanges {
        state.withLock { state in
            defer { state.yours = SequenceRanges(limit: MeshKnowledge.rangeLimit) }
            return state.yours
        }
    }

    /// This database now holds the peer's entries at `sequences` (kept until the peer
    /// names its store, if it has not yet).
    func cover(_ sequences: [UInt64]) {
        guard !sequences.isEmpty else { return }
        let source = state.withLock { state -> UInt32 in
            if state.peerSource == 0 { state.pendingCover += sequences }
            return state.peerSource
        }
        if source != 0 { knowledge.cover(source: source, sequences) }
    }

    /// The connection ended: this database no longer receives the peer's feed over it.
    func end() {
        let followed = state.withLock { state -> UInt32? in
            defer { state.ended = true }
            return state.following && !state.ended ? state.peerSource : nil
        }
        if let followed { knowledge.unfollow(source: followed) }
    }

    /// What the peer has of a revision that arrived here, by the mesh's knowledge.
    enum Holding: Sendable, Equatable {
        /// It holds it: the revision came over this very connection (the peer sent it), or
        /// the peer covers its source's sequence.
        case held
        /// Not known to be held, but the peer receives from the revision's source now and
        /// reported on it up to near the revision's sequence there (`comingWindow`): it may
        /// be receiving it from there right now.
        case coming
        /// Not known to be held.
        case unknown
    }

    /// How far past the highest sequence a peer reported of a source a revision may be and
    /// still be `coming`: beyond it the peer is too far behind there to wait for.
    static let comingWindow: UInt64 = 8192

    /// Per arrival (nil: none recorded), what the peer has of it.
    func holding(_ arrivals: [MeshKnowledge.Arrival?]) -> [Holding] {
        state.withLock { state in
            arrivals.map { arrival in
                guard let arrival else { return .unknown }
                if arrival.link == serial { return .held }
                guard arrival.source != 0, arrival.source != state.peerSource, let reported = state.reported[arrival.source] else {
                    return .unknown
                }
                if reported.contains(arrival.sequence) { return .held }
                guard state.live.contains(arrival.source) else { return .unknown }
                let highest = reported.ranges.last?.upperBound ?? 0
                return arrival.sequence <= highest &+ Self.comingWindow ? .coming : .unknown
            }
        }
    }

    /// A report of `ranges` from the store `uuid`, with the sources it receives from now
    /// when they changed (`live`).
    static func report(store uuid: String, _ ranges: [String: SequenceRanges], live: [String]? = nil) -> BLIPMessage {
        let report = CoverageReport(store: uuid, ranges: ranges, live: live)
        var properties = [("store", uuid)]
        if let live = report.liveProperty { properties.append(("live", live)) }
        return BLIPMessage(profile: profile, properties: properties, body: report.body, noReply: true)
    }
}
