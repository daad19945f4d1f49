import DocumentStore
import Synchronization

/// The revisions a database has asked one of its peers for and not yet received, across
/// all of its connections: one claim per (document, revision), held by the connection
/// whose `changes` answer asked for it.
///
/// In a mesh the same revision is offered to a node by every peer that holds it, and
/// after a heal several peers offer the same backlog at once. Each connection asking
/// for what another connection is already receiving made the node receive and insert
/// most revisions twice (216,530 revisions received for 120,000 needed in an 8-node heal).
/// A connection offered a revision that another connection has claimed waits for that
/// claim to end (the revision stored, refused, or its connection gone), up to
/// `patience`, and then asks the store again: only a revision still missing is asked
/// for, and then it is asked for anyway (so a slow or stalled peer delays, never loses).
///
/// Kept per store (keyed by its identity) for the life of the process; the registry
/// holds stores weakly. Claims are taken only while the store has more than one
/// receiving connection (`isShared`): alone, a connection has nobody to ask twice,
/// and a claim and its release per revision cost a one-connection pull 3–4 µs each.
final class RevisionClaims: Sendable {
    /// How long a `changes` answer waits for revisions another connection is receiving.
    static let patience: Duration = .seconds(2)

    private struct State {
        var holder: [String: ObjectIdentifier] = [:]
        var held: [ObjectIdentifier: Set<String>] = [:]
    }

    private let state = Mutex(State())
    /// The store's receiving connections now (`enter`/`leave`).
    private let receivers = Atomic<Int>(0)
    /// Moves on whenever a claim ends or changes hands: waiting answers look again then
    /// (no polling: in a debug build of the test suite, answers polling every 5 ms starved
    /// the cooperative pool).
    private let released = ChangeSignal()

    /// Claims for `owner` each of `keys` that no other owner holds; returns the
    /// positions (in `keys`) of those another owner holds, which are left to it.
    func claim(_ keys: [String], owner: ObjectIdentifier) -> [Int] {
        return state.withLock { state in
            var elsewhere: [Int] = []
            for (position, key) in keys.enumerated() {
                if let holder = state.holder[key], holder != owner {
                    elsewhere.append(position)
                } else {
                    state.holder[key] = owner
                    state.held[owner, default: []].insert(key)
                }
            }
            return elsewhere
        }
    }

    /// Claims `keys` for `owner` whoever holds them (after the wait ran out).
    func take(_ keys: [String], owner: ObjectIdentifier) {
        guard !keys.isEmpty else { return }
        let moved = state.withLock { state in
            var moved = false
            for key in keys {
                if let previous = state.holder.updateValue(owner, forKey: key), previous != owner {
                    state.held[previous]?.remove(key)
                    moved = true
                }
                state.held[owner, default: []].insert(key)
            }
            return moved
        }
        if moved { released.notify() }
    }

    /// Ends `owner`'s claims on `keys` (stored, refused or failed).
    func release(_ keys: [String], owner: ObjectIdentifier) {
        guard !keys.isEmpty else { return }
        let ended = state.withLock { state in
            guard state.held[owner] != nil else { return false }
            var ended = false
            for key in keys where state.holder[key] == owner {
                state.holder[key] = nil
                state.held[owner]?.remove(key)
                ended = true
            }
            if state.held[owner]?.isEmpty == true { state.held[owner] = nil }
            return ended
        }
        if ended { released.notify() }
    }

    /// Ends every claim of `owner` (its connection is gone).
    func releaseAll(owner: ObjectIdentifier) {
        let ended = state.withLock { state in
            let keys = state.held.removeValue(forKey: owner) ?? []
            for key in keys where state.holder[key] == owner {
                state.holder[key] = nil
            }
            return !keys.isEmpty
        }
        if ended { released.notify() }
    }

    /// True while another owner than `owner` holds any of `keys`.
    func heldElsewhere(_ keys: [String], owner: ObjectIdentifier) -> Bool {
        state.withLock { state in
            keys.contains { key in state.holder[key].map { $0 != owner } ?? false }
        }
    }

    /// Waits until no other owner holds any of `keys`, or `patience` ran out (or the task
    /// was cancelled). True when they were all released.
    func waitForRelease(_ keys: [String], owner: ObjectIdentifier, patience: Duration = RevisionClaims.patience) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + patience
        while true {
            let generation = released.generation
            guard heldElsewhere(keys, owner: owner) else { return true }
            let now = clock.now
            guard now < deadline, !Task.isCancelled else { return false }
            await released.wait(after: generation, timeout: deadline - now)
        }
    }

    /// Number of revisions claimed now (tests, diagnostics).
    var count: Int { state.withLock { $0.holder.count } }

    /// A receiving connection of the store began (`leave` when it ends).
    func enter() { receivers.add(1, ordering: .relaxed) }

    /// A receiving connection of the store ended.
    func leave() { receivers.subtract(1, ordering: .relaxed) }

    /// More than one connection receives into the store: claims are worth taking.
    var isShared: Bool { receivers.load(ordering: .relaxed) > 1 }

    /// True when `owner` holds any claim (its finished revisions have claims to release).
    func holdsAny(owner: ObjectIdentifier) -> Bool {
        state.withLock { $0.held[owner] != nil }
    }

    // MARK: Registry

    private static let registry = StoreRegistry { RevisionClaims() }

    /// The claims of `store`'s connections.
    static func of(_ store: DocumentStore) -> RevisionClaims {
        registry.value(for: store)
    }
}
