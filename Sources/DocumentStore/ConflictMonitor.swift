import DocumentModel
import Logging
import Synchronization

/// Follows one database's changes feed and resolves every conflict it finds with
/// the database's policies (ARCHITECTURE.md §4): conflicts created by replicated
/// revisions, by local `new_edits=false` writes, and, on start, those already in
/// the database. Owns the resolution loop, the list of conflicts waiting for a
/// merge base body, and the counters reported in metrics.
///
/// The loop reads the conflicted documents in feed order from sequence 0 at start
/// (through the store's index of conflicted documents, so a commit without
/// conflicts costs one small query), then wakes on every commit and waits `settle`
/// before reading again, so revisions arriving together
/// (one replicated batch) are resolved together rather than pairwise. Conflicts
/// that wait for a merge base body are tried again every `retryInterval` while
/// nothing changes (the provider asks the connected peers).
public final class ConflictMonitor: Sendable {
    /// Fetches the body of a merge base this node lacks (from a peer), or nil.
    public typealias MergeBaseProvider = @Sendable (_ docID: String, _ rev: RevID) async -> [String: JSON]?

    /// What the monitor has done since it started.
    public struct Counters: Sendable, Equatable {
        /// Conflicts resolved by this node (each wrote at least one revision).
        public var resolved = 0
        /// Revisions written by those resolutions.
        public var revisionsWritten = 0
        /// Conflicts left as they are (policy `none`).
        public var kept = 0
        /// Resolutions that failed (a `js` error, a missing leaf body).
        public var failed = 0

        public init() {}
    }

    private struct State {
        var counters = Counters()
        /// Conflicts that need a merge base body this node does not hold: doc ID → base.
        var waitingForBase: [String: RevID] = [:]
        var task: Task<Void, Never>?
    }

    public let store: DocumentStore
    /// The node this monitor resolves for: recorded as the origin of its resolutions.
    public let nodeID: String?
    /// The policies and `js` resolver in effect (`setPolicies` changes them at run time).
    private let rules: Mutex<(policies: ConflictPolicies, script: (any ConflictScript)?)>
    private let settle: Duration
    private let retryInterval: Duration
    private let logger: Logger
    private let state = Mutex(State())
    private let provider = Mutex<MergeBaseProvider?>(nil)

    public init(store: DocumentStore, policies: ConflictPolicies, script: (any ConflictScript)? = nil,
                nodeID: String? = nil, settle: Duration = .milliseconds(50), retryInterval: Duration = .seconds(2),
                logger: Logger = Logger(label: "Conflicts")) {
        self.store = store
        self.nodeID = nodeID
        rules = Mutex((policies, script))
        self.settle = settle
        self.retryInterval = retryInterval
        self.logger = logger
    }

    public var counters: Counters { state.withLock { $0.counters } }

    /// The conflict policies in effect.
    public var policies: ConflictPolicies { rules.withLock { $0.policies } }

    /// Replaces the policies and the `js` resolver (the admin config API); conflicts
    /// found from now on are resolved with them.
    public func setPolicies(_ policies: ConflictPolicies, script: (any ConflictScript)?) {
        rules.withLock { $0 = (policies, script) }
    }


    /// Conflicts waiting for a merge base body: doc ID → merge base revision.
    public var waitingForMergeBase: [String: RevID] { state.withLock { $0.waitingForBase } }

    /// Sets who is asked for missing merge base bodies (the replication layer).
    public func setMergeBaseProvider(_ provider: MergeBaseProvider?) {
        self.provider.withLock { $0 = provider }
    }

    /// Starts the loop (once).
    public func start() {
        state.withLock { state in
            guard state.task == nil else { return }
            state.task = Task { await self.run() }
        }
    }

    /// Stops the loop and waits for it to end.
    public func stop() async {
        let task = state.withLock { state -> Task<Void, Never>? in
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
        await task?.value
    }

    private func run() async {
        var cursor: UInt64 = 0
        while !Task.isCancelled {
            let conflicted: [DocumentListing]
            let through: UInt64
            do {
                // Only the conflicted documents changed after the cursor (a partial index),
                // not the whole feed: a replicated batch without conflicts costs one query.
                (conflicted, through) = try await store.conflictedDocumentsAndCursor(since: cursor, limit: 500)
            } catch {
                if Task.isCancelled { return }
                logger.warning("conflict monitor cannot read the conflicted documents: \(error)")
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            for listing in conflicted {
                if Task.isCancelled { return }
                await resolve(listing.docID)
            }
            let advanced = through > cursor
            cursor = max(cursor, through)
            if advanced && !conflicted.isEmpty { continue }
            let waiting = waitingForMergeBase
            guard await store.waitForChange(after: cursor, timeout: waiting.isEmpty ? .seconds(3600) : retryInterval) else {
                // Nothing changed: try again the conflicts that wait for a merge base
                // (a peer that has it may have connected since).
                for docID in waiting.keys.sorted() where !Task.isCancelled { await resolve(docID) }
                continue
            }
            try? await Task.sleep(for: settle)
        }
    }

    /// Resolves one document now (also what the loop does for each conflict), with
    /// the database's policies or with `policy`. Nil when the store failed (logged).
    @discardableResult
    public func resolve(_ docID: String, policy: ConflictPolicy? = nil) async -> ConflictOutcome? {
        try? await resolveOrThrow(docID, policy: policy)
    }

    /// Like `resolve`, but throws the store's error (`404` for an unknown document).
    public func resolveOrThrow(_ docID: String, policy: ConflictPolicy? = nil) async throws(StoreError) -> ConflictOutcome {
        var outcome: ConflictOutcome
        let current = rules.withLock { $0 }
        do {
            outcome = try await store.resolveConflict(
                docID: docID, policies: current.policies, policy: policy, script: current.script, resolver: nodeID)
            if case .needsMergeBase(let base) = outcome, let fetched = await fetchMergeBase(docID, base, policy: policy) {
                outcome = fetched
            }
        } catch {
            if error.kind != .notFound {
                logger.warning("cannot resolve the conflict of \(docID): \(error)")
                state.withLock { $0.counters.failed += 1 }
            }
            throw error
        }
        state.withLock { state in
            if case .needsMergeBase(let base) = outcome {
                state.waitingForBase[docID] = base
            } else {
                state.waitingForBase[docID] = nil
            }
            switch outcome {
            case .resolved(let resolution):
                state.counters.resolved += 1
                state.counters.revisionsWritten += resolution.revisions.count
            case .keep: state.counters.kept += 1
            case .failed(let reason):
                state.counters.failed += 1
                logger.warning("conflict of \(docID) left unresolved: \(reason)")
            case .noConflict, .needsMergeBase: break
            }
        }
        return outcome
    }

    /// Asks the provider for the merge base body, stores it, and resolves again.
    private func fetchMergeBase(_ docID: String, _ base: RevID, policy: ConflictPolicy?) async -> ConflictOutcome? {
        guard let provider = provider.withLock({ $0 }), let body = await provider(docID, base) else { return nil }
        let current = rules.withLock { $0 }
        do {
            try await store.storeMissingBody(docID: docID, rev: base, body: body)
            return try await store.resolveConflict(
                docID: docID, policies: current.policies, policy: policy, script: current.script, resolver: nodeID)
        } catch {
            logger.warning("cannot use the merge base \(base) of \(docID) fetched from a peer: \(error)")
            return nil
        }
    }
}
