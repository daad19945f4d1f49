#if canImport(Glibc)
import Glibc
#endif
import BLIP
import DocumentModel
import DocumentStore
import Foundation
import Logging
import Synchronization

/// The node's nemesis (docs/operations.md "The nemesis"): faults injected on purpose, at
/// the node's own level, for chaos runs on real hosts without root. Off unless the config
/// enables it (`"nemesis": {"enabled": true}`), admin-only (`/_nemesis` on the admin port).
///
/// Owns the active faults and their deadlines, and what they act through: one
/// `LinkFaults` per mesh peer (attached to every link with it), the stores' disk-full
/// switches and the hybrid logical clock's wall-clock offset. Every fault lifts itself at
/// its deadline, by a timer inside the node, whether or not whoever asked for it is still
/// there; nothing of it is kept across a restart. Each change is recomputed from the whole
/// set of active faults, so overlapping faults lift in any order.
public final class Nemesis: Sendable {
    /// One fault in effect.
    struct Active: Sendable {
        let id: Int
        let fault: NemesisFault
        let applied: Date
        let liftsAt: Date
        let timer: Task<Void, Never>
    }

    /// One fault that ended, for the history.
    struct Lifted: Sendable {
        let id: Int
        let fault: NemesisFault
        let applied: Date
        let lifted: Date
        let how: String
    }

    private struct State {
        var active: [Int: Active] = [:]
        var lifted: [Lifted] = []
        var nextID = 1
        var links: [String: LinkFaults] = [:]
        /// The node a dialed URL's acceptor said it is (set before the link's session starts).
        var acceptors: [String: String] = [:]
        var applied: [NemesisFault.Kind: Int] = [:]
        var stopped = false
    }

    /// How many ended faults `GET /_nemesis` lists.
    static let historyLength = 20

    public let settings: NemesisSettings
    /// The stores by database (a database's named collections share its switch and clock).
    let stores: [String: DocumentStore]
    let logger: Logger
    let metrics: NodeMetrics
    private let state = Mutex(State())
    /// The wall-clock offset of every database's hybrid logical clock, in nanoseconds.
    private let clockOffset = OffsetBox()

    /// An atomic offset the stores' wall clocks read (a class, so closures can hold it).
    final class OffsetBox: Sendable {
        let nanoseconds = Atomic<Int64>(0)
    }
    /// Called after a fault ends (the meshes redial at once).
    private let onLift = Mutex<@Sendable () -> Void>({})

    init(settings: NemesisSettings, stores: [String: DocumentStore], metrics: NodeMetrics, logger: Logger) {
        self.settings = settings
        self.stores = stores
        self.metrics = metrics
        self.logger = logger
        for store in stores.values {
            store.setWallClock { [clockOffset] in
                Self.systemWallTime() &+ UInt64(bitPattern: clockOffset.nanoseconds.load(ordering: .relaxed))
            }
        }
    }

    /// Nanoseconds since 1970 from `CLOCK_REALTIME`.
    static func systemWallTime() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(max(0, now.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, now.tv_nsec))
    }

    func setOnLift(_ action: @escaping @Sendable () -> Void) {
        onLift.withLock { $0 = action }
    }

    // MARK: Applying and lifting

    /// Applies a fault; returns its entry (`GET /_nemesis` shape). `disk_full` databases
    /// must exist.
    func apply(_ fault: NemesisFault) throws(NemesisError) -> JSON {
        if let names = fault.databases, let unknown = names.first(where: { stores[$0] == nil }) {
            throw NemesisError("no database \"\(unknown)\" on this node", status: 404)
        }
        let now = Date()
        let entry = state.withLock { state -> Active? in
            guard !state.stopped else { return nil }
            let id = state.nextID
            state.nextID += 1
            let timer = Task { [weak self] in
                try? await Task.sleep(for: fault.duration)
                guard !Task.isCancelled, let self else { return }
                if fault.kind == .crash { self.crash(id: id) } else { self.lift(id: id, how: "deadline") }
            }
            let active = Active(
                id: id, fault: fault, applied: now, liftsAt: now.addingTimeInterval(fault.duration.seconds), timer: timer)
            state.active[id] = active
            state.applied[fault.kind, default: 0] += 1
            return active
        }
        guard let entry else { throw NemesisError("the node is stopping", status: 503) }
        metrics.nemesisApplied(kind: fault.kind.rawValue)
        let what = fault.kind == .crash ? "crash in \(fault.duration.wholeMilliseconds) ms" : "for \(fault.duration)"
        logger.warning("nemesis: injected fault \(entry.id), \(Self.describe(fault)) \(what) (an injected fault, not a real one)")
        recompute()
        return Self.json(entry)
    }

    /// Lifts fault `id`; false when there is none.
    @discardableResult
    func lift(id: Int, how: String = "request") -> Bool {
        let ended = state.withLock { state -> Active? in
            guard let active = state.active.removeValue(forKey: id) else { return nil }
            state.lifted.append(Lifted(id: id, fault: active.fault, applied: active.applied, lifted: Date(), how: how))
            if state.lifted.count > Self.historyLength { state.lifted.removeFirst(state.lifted.count - Self.historyLength) }
            return active
        }
        guard let ended else { return false }
        if how != "deadline" { ended.timer.cancel() }
        logger.warning("nemesis: lifted fault \(id), \(Self.describe(ended.fault)) (\(how))")
        recompute()
        onLift.withLock { $0 }()
        return true
    }

    /// Lifts every fault; returns how many there were.
    @discardableResult
    func liftAll(how: String = "request") -> Int {
        let ids = state.withLock { $0.active.keys.sorted() }
        return ids.filter { lift(id: $0, how: how) }.count
    }

    /// Lifts every fault and takes no more (the node stops).
    func stop() {
        liftAll(how: "node stopped")
        state.withLock { $0.stopped = true }
    }

    /// The crash fault: the process ends at once, as on a power cut, without closing
    /// anything (systemd's `Restart=` brings the node back).
    private func crash(id: Int) {
        logger.critical("nemesis: fault \(id): crashing the node now (SIGKILL, an injected fault)")
        kill(getpid(), SIGKILL)
    }

    /// Sets every switch from the active faults.
    private func recompute() {
        let (faults, links) = state.withLock { state in (state.active.values.map(\.fault), state.links) }
        for (peer, link) in links { link.set(Self.settings(faults, peer: peer)) }
        let offset = faults.filter { $0.kind == .clock }.reduce(Duration.zero) { $0 + $1.clockOffset }
        clockOffset.nanoseconds.store(offset.components.seconds &* 1_000_000_000 &+ offset.components.attoseconds / 1_000_000_000, ordering: .relaxed)
        let full = faults.filter { $0.kind == .diskFull }
        for (name, store) in stores {
            store.setDiskFullFault(full.contains { $0.databases.map { $0.contains(name) } ?? true })
        }
        var counts: [String: Int] = [:]
        for kind in NemesisFault.Kind.allCases { counts[kind.rawValue] = 0 }
        for fault in faults { counts[fault.kind.rawValue, default: 0] += 1 }
        metrics.nemesisActive(counts)
    }

    static func settings(_ faults: [NemesisFault], peer: String) -> LinkFaults.Settings {
        var settings = LinkFaults.Settings()
        for fault in faults { fault.add(to: &settings, peer: peer) }
        return settings
    }

    // MARK: Links

    /// The faults on the links to `peer` (made on first use, with what is in effect).
    func linkFaults(peer: String) -> LinkFaults {
        let (link, created, faults) = state.withLock { state -> (LinkFaults, Bool, [NemesisFault]) in
            if let link = state.links[peer] { return (link, false, []) }
            let link = LinkFaults()
            state.links[peer] = link
            return (link, true, state.active.values.map(\.fault))
        }
        if created { link.set(Self.settings(faults, peer: peer)) }
        return link
    }

    /// Why a link with `peer` is refused now (a partition both ways), or nil.
    func refusal(peer: String) -> String? {
        let cut = state.withLock { state in
            state.active.values.first { $0.fault.kind == .partition && $0.fault.direction == .both && $0.fault.touches(peer: peer) }
        }
        return cut.map { "partitioned from \(peer) by the nemesis (fault \($0.id), an injected fault)" }
    }

    /// Records the node a dialed URL reached (the handshake's answer).
    func dialed(url: String, acceptor: String) {
        state.withLock { $0.acceptors[url] = acceptor }
    }

    /// Attaches the faults of the peer a dial to `url` reached to its connection.
    func attach(_ connection: BLIPConnection, dialedURL url: String) {
        guard let peer = state.withLock({ $0.acceptors[url] }) else { return }
        connection.setFaults(linkFaults(peer: peer))
    }

    // MARK: Status

    /// `GET /_nemesis`, and `_mesh`'s `nemesis`.
    var status: JSON {
        let (active, lifted, applied) = state.withLock { state in
            (state.active.values.sorted { $0.id < $1.id }, state.lifted, state.applied)
        }
        return [
            "enabled": true,
            "max_duration": .double(settings.maxDuration.seconds),
            "faults": .array(active.map(Self.json)),
            "lifted": .array(lifted.reversed().map { entry in
                var object = entry.fault.json.objectValue ?? [:]
                object["id"] = .int(Int64(entry.id))
                object["applied"] = .string(ISO8601Time.string(entry.applied, milliseconds: true))
                object["lifted"] = .string(ISO8601Time.string(entry.lifted, milliseconds: true))
                object["how"] = .string(entry.how)
                return .object(object)
            }),
            "applied": .object(Dictionary(uniqueKeysWithValues: applied.map { ($0.key.rawValue, JSON.int(Int64($0.value))) })),
        ]
    }

    static func json(_ active: Active) -> JSON {
        var object = active.fault.json.objectValue ?? [:]
        object["id"] = .int(Int64(active.id))
        object["applied"] = .string(ISO8601Time.string(active.applied, milliseconds: true))
        object["lifts_at"] = .string(ISO8601Time.string(active.liftsAt, milliseconds: true))
        object["remaining"] = .double(max(0, (active.liftsAt.timeIntervalSinceNow * 1000).rounded() / 1000))
        return .object(object)
    }

    /// `partition of [a, b] (both)`, for logs.
    static func describe(_ fault: NemesisFault) -> String {
        var text = fault.kind.rawValue
        if let peers = fault.peers { text += " of [\(peers.joined(separator: ", "))]" }
        if let databases = fault.databases { text += " of [\(databases.joined(separator: ", "))]" }
        switch fault.kind {
        case .partition: text += " (\(fault.direction.rawValue))"
        case .delay: text += " \(fault.delay.wholeMilliseconds) ms ± \(fault.jitter.wholeMilliseconds) ms"
        case .loss: text += " \(fault.lossPercent)%"
        case .clock: text += " \(fault.clockOffset.wholeMilliseconds) ms"
        default: break
        }
        return text
    }
}

/// The nemesis's config: `"nemesis": {"enabled": true, "max_duration": 600}`. Off by
/// default: a node that injects faults on request must be asked for that by its operator.
public struct NemesisSettings: Sendable, Equatable {
    public var enabled = false
    /// The longest fault (seconds in the config; default 600).
    public var maxDuration: Duration = .seconds(600)

    public init(enabled: Bool = false, maxDuration: Duration = .seconds(600)) {
        self.enabled = enabled
        self.maxDuration = maxDuration
    }
}
