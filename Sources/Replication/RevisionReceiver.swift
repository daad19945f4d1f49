import BLIP
import DocumentModel
import DocumentStore
import Foundation
import Logging
import Synchronization

/// Receives the peer's changes: answers `changes`/`proposeChanges` with the
/// revisions this database lacks, inserts each `rev` with its history
/// (`new_edits=false` semantics: divergent histories become conflicts, never lost),
/// fetching missing attachments first, and tracks what an active pull is waiting for.
final class RevisionReceiver: Sendable {
    let store: DocumentStore
    let connection: CollectionLink
    let progress: ReplicationProgress
    let logger: Logger
    let inserter: RevisionInserter
    /// How the peer speaks (`PeerAccess.dialect`).
    let dialect: PeerDialect

    /// The peer reads only some channels: an attachment it names that we already hold
    /// (and that the revision's parent does not have) must be proven with
    /// `proveAttachment`, or naming a digest would be a way to read it.
    let provesAttachments: Bool
    /// What the peer offered over this connection (`changes`, `proposeChanges`): it has
    /// those, so this session's changes feed does not offer them back. Replicators offer
    /// every `rev` before sending it, so `rev`s are not recorded again on the reader.
    let peerHas = PeerRevisions()
    /// The revisions this database's connections are receiving (`RevisionClaims`): what
    /// another connection is receiving is not asked for twice.
    let claims: RevisionClaims
    /// What the peer holds and what we hold of its feed, when the peer is a Shoal node
    /// that reads everything (`ReplicationSession.exchangesCoverage`).
    let coverage: PeerCoverage?
    /// True once the connection ended (`endPull`): a handler still running then takes
    /// no claim, or it would hold it with nobody left to release it.
    private let ended = Mutex(false)
    private let pull = Mutex<PullState?>(nil)

    /// What an active pull waits for: every wanted revision, in the peer's sequence order.
    struct PullState {
        var tracker: SequenceTracker<JSON>
        var pending: [String: Int] = [:]
        var caughtUp = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var continuous: Bool
        /// Purge local copies of documents the peer says we lost access to.
        var purgeOnRemoval = false
        /// The highest of the peer's (integer) sequences offered so far.
        var highestOffered: Int64?
        /// Coverage of the peer's feed (`RevisionReceiver+Coverage.swift`).
        var cover = CoverageBook()

        var isIdle: Bool { caughtUp && tracker.isIdle }

        /// How many of the peer's sequences the awaited revisions span (at least one while
        /// any is awaited).
        var awaitedSequences: Int {
            guard !pending.isEmpty else { return 0 }
            guard let highest = highestOffered, let through = tracker.completed?.intValue, highest > through else { return 1 }
            return Int(clamping: highest - through)
        }
    }

    init(
        store: DocumentStore, connection: CollectionLink, progress: ReplicationProgress, author: (any Sendable)? = nil,
        origin: RevisionOrigin = .peer(node: nil), dialect: PeerDialect = PeerDialect(),
        provesAttachments: Bool = false, coverage: PeerCoverage? = nil, logger: Logger
    ) {
        self.coverage = coverage
        self.dialect = dialect
        self.provesAttachments = provesAttachments
        self.store = store
        self.connection = connection
        self.progress = progress
        self.logger = logger
        claims = RevisionClaims.of(store)
        claims.enter()
        // The inserter reports back without keeping the receiver alive.
        let owner = WeakReceiver()
        var beforeSave: (@Sendable ([RevisionInserter.Arrival]) -> Void)?
        if let coverage {
            beforeSave = { arrivals in Self.recordArrivals(arrivals, coverage: coverage) }
        }
        inserter = RevisionInserter(
            store: store, author: author, origin: origin,
            parse: { message throws(BLIPError) in
                try Self.parseRev(message, dialect: dialect)
            },
            onBatch: { outcomes in owner.receiver?.inserted(outcomes) },
            beforeSave: beforeSave)
        owner.receiver = self
    }

    deinit {
        if !ended.withLock({ $0 }) { claims.leave() }
        claims.releaseAll(owner: ObjectIdentifier(self))
    }

    func register() {
        // Changes are registered in the peer's order (checkpoints depend on it).
        connection.setHandler(for: ReplicationMessages.changes, serial: true) { [self] in try await handleChanges($0) }
        connection.setHandler(for: ReplicationMessages.proposeChanges, serial: true) { [self] in
            try await handleProposeChanges($0)
        }
        // `rev` is handled without a task per message: the reader queues it for the
        // inserter, which answers when its batch is committed.
        connection.setImmediateHandler(for: ReplicationMessages.rev) { [weak self] message, responder in
            guard let self else {
                responder.fail(BLIPError.connectionClosed)
                return
            }
            receiveRev(message, responder: responder)
        }
        connection.setHandler(for: ReplicationMessages.norev) { [self] in try await handleNoRev($0) }
    }

    // MARK: Active pull bookkeeping

    /// Starts tracking a pull that resumes after `since` (the peer's sequence).
    func beginPull(since: JSON?, continuous: Bool, purgeOnRemoval: Bool = false) {
        pull.withLock {
            $0 = PullState(tracker: SequenceTracker(start: since), continuous: continuous, purgeOnRemoval: purgeOnRemoval)
        }
    }

    /// True when the peer said it caught up and every wanted revision is in.
    var isPullIdle: Bool { pull.withLock { $0?.isIdle ?? true } }

    /// The peer sequence through which every wanted revision has been inserted.
    var pulledThrough: JSON? { pull.withLock { $0?.tracker.completed } }

    /// Waits until the peer said it caught up and every wanted revision is in.
    func waitUntilCaughtUp() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = pull.withLock { state -> Bool in
                guard let current = state, !current.isIdle else { return true }
                state!.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Releases pull waiters and this connection's claims (connection gone).
    func endPull() {
        let ending = ended.withLock { ended in
            defer { ended = true }
            return !ended
        }
        if ending { claims.leave() }
        claims.releaseAll(owner: ObjectIdentifier(self))
        let waiters = pull.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state = nil }
            progress.recordReceiving(store, revisions: 0, sequences: 0)
            return state?.waiters ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Tracks what the peer pushes to a passive session as an active pull is tracked,
    /// for the link's accounting (`LinkState`): started by the first `changes`.
    func beginPassiveTracking() {
        pull.withLock { state in
            if state == nil { state = PullState(tracker: SequenceTracker(start: nil), continuous: true) }
        }
    }

    func updatePull(_ change: (inout PullState) -> Void) {
        let woken = pull.withLock { state -> [CheckedContinuation<Void, Never>] in
            // Mutated in place: a copy would duplicate `pending` and the tracker on
            // every call (copy-on-write), which costs O(wanted revisions) each time.
            guard state != nil else { return [] }
            change(&state!)
            // Told under the lock, so that the link's count is never an older one.
            progress.recordReceiving(store, revisions: state!.pending.count, sequences: state!.awaitedSequences)
            guard state!.isIdle, !state!.waiters.isEmpty else { return [] }
            defer { state!.waiters = [] }
            return state!.waiters
        }
        for waiter in woken { waiter.resume() }
    }

    static func key(_ docID: String, _ rev: String) -> String { docID + "\u{0}" + rev }

    // MARK: Handlers

    /// `changes`: for each `[seq, docID, revID, flags]`, either the known ancestors
    /// (we want it) or 0 (we have it). An empty list means the peer caught up. An
    /// entry saying we lost access to a document is never wanted; with
    /// `purge_on_removal` our copy is purged, as Couchbase Lite does by default.
    func handleChanges(_ message: BLIPMessage) async throws -> BLIPMessage {
        guard let items = try ReplicationMessages.parseJSONBody(message).arrayValue ?? (message.body.isEmpty ? [] : nil) else {
            throw ReplicationMessages.error(400, "changes body must be a JSON array")
        }
        beginPassiveTracking()
        if items.isEmpty {
            updatePull { $0.caughtUp = true }
            return BLIPMessage()
        }
        // Sync Gateway's no-conflicts mode: a client pushes with `proposeChanges`; a
        // Couchbase Lite pusher that tried `changes` switches on this answer and sends
        // the batch again (`ignoreNoConflicts` is Sync Gateway's opt-out).
        if dialect.refusesBranches, message["ignoreNoConflicts"] != "true" {
            throw ReplicationMessages.error(409, "Use 'proposeChanges' instead")
        }
        if dialect.namesByVersions { return try await handleVersionedChanges(items) }
        var entries = try items.map { (item: JSON) throws(BLIPError) -> ReplicationMessages.ChangeEntry in
            guard let entry = ReplicationMessages.ChangeEntry(item) else {
                throw ReplicationMessages.error(400, "malformed changes entry \(item)")
            }
            return entry
        }
        try ReplicationMessages.applyRowVectors(message[ReplicationMessages.rowVectorsProperty], to: &entries)
        // The peer has what it offers: our feed need not offer it back.
        for entry in entries where !entry.lostAccess { peerHas.record(docID: entry.docID, rev: entry.revID, vector: entry.vector) }
        var wanted: [[RevID]?]
        if entries.contains(where: \.lostAccess) {
            wanted = try await missingSkippingLost(entries)
            await purgeLost(entries)
        } else {
            let differing: [Int]
            (wanted, differing) = try await missing(entries.map { ($0.docID, $0.revID) }, vectors: entries.map(\.vector))
            try await reconcile(differing.map { entries[$0] })
        }
        wanted = try await claimed(entries.map { ($0.docID, $0.revID) }, wanted: wanted)
        let asked = wanted.reduce(0) { $0 + ($1 == nil ? 0 : 1) }
        progress.update {
            $0.docsCheckedPull += entries.count
            $0.revisions.asked += asked
        }
        var answers: [JSON] = []
        var covered: [UInt64] = []
        let tracksCoverage = coverage != nil && !entries.contains(where: \.lostAccess)
        // Once the peer said it caught up, later batches (continuous) only add work.
        updatePull { state in
            for (entry, answer) in zip(entries, wanted) {
                let index = state.tracker.add(entry.sequence, parts: answer == nil ? 0 : 1)
                if let offered = entry.sequence.intValue { state.highestOffered = max(state.highestOffered ?? offered, offered) }
                if answer != nil { state.pending[Self.key(entry.docID, entry.revID.description)] = index }
            }
            if tracksCoverage {
                covered = state.cover.add(entries.indices.map { position in
                    (entries[position].sequence.intValue.flatMap { UInt64(exactly: $0) },
                     wanted[position] == nil ? nil : Self.key(entries[position].docID, entries[position].revID.description))
                })
            }
        }
        cover(covered)
        for answer in wanted {
            answers.append(answer.map { .array($0.map { .string($0.description) }) } ?? 0)
        }
        while answers.last == 0 { answers.removeLast() }
        return BLIPMessage(
            properties: [("maxHistory", String(store.configuration.revsLimit))],
            body: JSON.array(answers).canonicalBytes())
    }

    /// `missing` for the entries that offer a revision; nil (not wanted) for those that
    /// say access was lost.
    private func missingSkippingLost(_ entries: [ReplicationMessages.ChangeEntry]) async throws(BLIPError) -> [[RevID]?] {
        let offered = entries.indices.filter { !entries[$0].lostAccess }
        var wanted = [[RevID]?](repeating: nil, count: entries.count)
        for (position, answer) in zip(offered, try await missing(offered.map { (entries[$0].docID, entries[$0].revID) })) {
            wanted[position] = answer
        }
        return wanted
    }

    /// Purges the documents of `entries` that say access was lost (and that the same
    /// batch does not offer again), when the pull asked for it.
    private func purgeLost(_ entries: [ReplicationMessages.ChangeEntry]) async {
        await purgeLost(entries.map { ($0.docID, $0.lostAccess) })
    }

    /// Purges the documents of `entries` (document, says access was lost) that say access
    /// was lost and that no entry of the same batch offers again, when the pull asked for it.
    func purgeLost(_ entries: [(docID: String, lostAccess: Bool)]) async {
        guard pull.withLock({ $0?.purgeOnRemoval ?? false }) else { return }
        let offered = Set(entries.filter { !$0.lostAccess }.map(\.docID))
        let lost = Set(entries.filter { $0.lostAccess && !offered.contains($0.docID) }.map(\.docID))
        guard !lost.isEmpty else { return }
        do {
            let purged = try await store.purge(lost.sorted().map { ($0, nil) })
            progress.update { $0.docsPurged += purged.count }
            logger.info("purged \(purged.count) documents the peer no longer gives us access to")
        } catch {
            logger.warning("could not purge documents we lost access to: \(error)")
        }
    }

    /// For each (doc, rev): nil if the database has it, else its known ancestors.
    private func missing(_ pairs: [(String, RevID)]) async throws(BLIPError) -> [[RevID]?] {
        do {
            return try await store.missingRevisions(pairs.map { (docID: $0.0, rev: $0.1) })
        } catch {
            throw ReplicationMessages.error(error)
        }
    }

    /// `missing`, and which offers name our winner with another vector than ours (a Shoal
    /// peer's rows carry it: `DocumentStore.missingRevisions(_:vectors:)`).
    private func missing(
        _ pairs: [(String, RevID)], vectors: [OfferedVector]
    ) async throws(BLIPError) -> (missing: [[RevID]?], differing: [Int]) {
        do {
            return try await store.missingRevisions(pairs.map { (docID: $0.0, rev: $0.1) }, vectors: vectors)
        } catch {
            throw ReplicationMessages.error(error)
        }
    }

    /// Offered winners we have, whose vector differs from ours (identical edits made on
    /// two nodes, or one revision that came by paths with different vectors): our vector
    /// becomes `reconciling` of both. When the peer lacks part of the result, it is no
    /// longer counted as having the revision, so our feed offers it back (with the result).
    /// A malformed vector is a 400 naming the document; nothing is stored.
    private func reconcile(_ entries: [ReplicationMessages.ChangeEntry]) async throws(BLIPError) {
        guard !entries.isEmpty else { return }
        var offers: [(docID: String, rev: RevID, vector: VersionVector)] = []
        for entry in entries {
            guard case .stored(let text) = entry.vector else { continue }
            let vector = try Self.parseVector(docID: entry.docID, checkingCausality: false) { () throws(VersionVectorError) in
                guard let text else { return VersionVector(Version.legacy(revID: entry.revID)) }
                return try VersionVector(parsing: text)
            }
            offers.append((entry.docID, entry.revID, vector))
        }
        let peerLacks: [Bool]
        do {
            peerLacks = try await store.reconcileVectors(offers)
        } catch {
            throw ReplicationMessages.error(error)
        }
        for (offer, lacks) in zip(offers, peerLacks) where lacks { peerHas.forget(docID: offer.docID, rev: offer.rev) }
    }

    /// `wanted` (per offered revision: nil = we have it) once this connection has claimed
    /// what it asks for (`RevisionClaims`): a revision another connection is receiving
    /// is waited for (up to `RevisionClaims.patience`), then asked for only if the store
    /// still lacks it.
    func claimed(_ pairs: [(String, RevID)], wanted: [[RevID]?]) async throws(BLIPError) -> [[RevID]?] {
        try await claimed(wanted, wants: { $0 != nil }, key: { Self.key(pairs[$0].0, pairs[$0].1.description) }) {
            positions throws(BLIPError) in try await missing(positions.map { pairs[$0] })
        }
    }

    /// `claimed(_:wanted:)` for any answer: per offered revision its `answer`, of which
    /// those `wants` accepts ask for the revision; `key` names the revision at a position
    /// (document and revision ID, or version, as its `rev` will name it); `recheck`
    /// answers again for the given positions once the claims that held them ended. Returns
    /// the answers, rechecked where they waited.
    func claimed<Answer: Sendable>(
        _ answers: [Answer], wants: (Answer) -> Bool, key: (Int) -> String,
        recheck: ([Int]) async throws(BLIPError) -> [Answer]
    ) async throws(BLIPError) -> [Answer] {
        // Alone, a connection has nobody to ask twice (`RevisionClaims.isShared`).
        guard claims.isShared else { return answers }
        let positions = answers.indices.filter { wants(answers[$0]) }
        guard !positions.isEmpty else { return answers }
        let owner = ObjectIdentifier(self)
        let claimedKeys = positions.map(key)
        let elsewhere = claims.claim(claimedKeys, owner: owner)
        // Checked after claiming: `endPull` sets `ended` before it releases everything,
        // so a claim made after that release is seen here and undone.
        if ended.withLock({ $0 }) {
            claims.releaseAll(owner: owner)
            return answers
        }
        guard !elsewhere.isEmpty else { return answers }
        _ = await claims.waitForRelease(elsewhere.map { claimedKeys[$0] }, owner: owner)
        let again = try await recheck(elsewhere.map { positions[$0] })
        var result = answers
        var stillMissing: [String] = []
        for (index, answer) in zip(elsewhere, again) {
            result[positions[index]] = answer
            if wants(answer) { stillMissing.append(claimedKeys[index]) }
        }
        claims.take(stillMissing, owner: owner)
        if ended.withLock({ $0 }) || Task.isCancelled { claims.releaseAll(owner: owner) }
        return result
    }

    /// `proposeChanges` (`[docID, revID, serverRevID?, bodySize?]`): 0 = send it, 304 =
    /// have it. A mesh peer's branches are welcome (the mesh resolves conflicts); a
    /// client in no-conflicts mode gets 409 for a revision whose `serverRevID` is not
    /// our current revision, as Sync Gateway and couchbase-lite-core's RevFinder answer
    /// (`{"status": 409, "rev": current}` when the request has `conflictIncludesRev`).
    func handleProposeChanges(_ message: BLIPMessage) async throws -> BLIPMessage {
        guard let items = try ReplicationMessages.parseJSONBody(message).arrayValue else {
            throw ReplicationMessages.error(400, "proposeChanges body must be a JSON array")
        }
        if dialect.namesByVersions { return try await handleProposedVersions(message, items: items) }
        var proposals: [(docID: String, rev: RevID, parent: RevID?)] = []
        for item in items {
            guard let fields = item.arrayValue, fields.count >= 2, let docID = fields[0].stringValue,
                  let rev = fields[1].stringValue.flatMap(RevID.init)
            else { throw ReplicationMessages.error(400, "malformed proposeChanges entry \(item)") }
            let parent = fields.count > 2 ? fields[2].stringValue.flatMap(RevID.init) : nil
            proposals.append((docID, rev, parent))
            peerHas.record(docID: docID, rev: rev)
        }
        if dialect.refusesBranches {
            let found: [String: DocumentMetadata]
            do {
                found = try await store.metadata(proposals.map(\.docID))
            } catch {
                throw ReplicationMessages.error(error)
            }
            return Self.proposeChangesReply(message, proposals.map { proposal in
                let tree = found[proposal.docID]?.tree
                return (Self.proposalStatus(rev: proposal.rev, parent: proposal.parent, tree: tree), tree?.winner?.description)
            })
        }
        let pairs = proposals.map { ($0.docID, $0.rev) }
        let missing = try await claimed(pairs, wanted: try await missing(pairs))
        return Self.proposeChangesReply(message, missing.map { ($0 == nil ? 304 : 0, nil) })
    }

    /// The `proposeChanges` reply: per entry its status (0 = send it), or for a 409 with
    /// `current` (our current revision or version) `{"status": 409, "rev": current}` when
    /// the request has `conflictIncludesRev` (Couchbase Lite 3 and 4 ask for it, and retry
    /// at once when they already descend from it); trailing zeros dropped.
    static func proposeChangesReply(_ message: BLIPMessage, _ entries: [(status: Int, current: String?)]) -> BLIPMessage {
        let includeRev = message["conflictIncludesRev"] == "true"
        var answers: [JSON] = entries.map { entry in
            guard entry.status == 409, includeRev, let current = entry.current else { return .int(Int64(entry.status)) }
            return ["status": 409, "rev": .string(current)]
        }
        while answers.last == 0 { answers.removeLast() }
        return BLIPMessage(body: JSON.array(answers).canonicalBytes())
    }

    /// No-conflicts mode: 304 when we have the revision, 0 when it continues our
    /// current revision (or the document is absent, or deleted and the revision starts
    /// a new history), else 409.
    static func proposalStatus(rev: RevID, parent: RevID?, tree: RevTree?) -> Int {
        guard let tree, let winner = tree.winner else { return 0 }
        if tree.contains(rev) { return 304 }
        if parent == winner || (parent == nil && tree.isDeleted) { return 0 }
        return 409
    }

    /// `norev`: the peer cannot send a revision it offered.
    func handleNoRev(_ message: BLIPMessage) async throws -> BLIPMessage {
        if let docID = message["id"], let rev = message["rev"] { finish(docID, rev, failed: true) }
        return BLIPMessage()
    }

    /// Records that a wanted revision arrived (or failed).
    func finish(_ docID: String, _ rev: String, failed: Bool) {
        finish([(docID, rev, failed)])
    }

    /// Records that wanted revisions arrived (or failed), under one lock.
    func finish(_ revisions: [(docID: String, rev: String, failed: Bool)]) {
        guard !revisions.isEmpty else { return }
        if claims.holdsAny(owner: ObjectIdentifier(self)) {
            claims.release(revisions.map { Self.key($0.docID, $0.rev) }, owner: ObjectIdentifier(self))
        }
        var covered: [UInt64] = []
        updatePull { state in
            for (docID, rev, failed) in revisions {
                let key = Self.key(docID, rev)
                if let index = state.pending.removeValue(forKey: key) { state.tracker.complete(index) }
                if let sequence = state.cover.finish(key, failed: failed) { covered.append(sequence) }
            }
        }
        cover(covered)
        let failures = revisions.reduce(0) { $0 + ($1.failed ? 1 : 0) }
        progress.update {
            $0.docsFailedPull += failures
            $0.docsPulled += revisions.count - failures
        }
    }
}

/// A weak reference to a receiver, for callbacks that must not keep it alive.
final class WeakReceiver: Sendable {
    private struct Box { weak var receiver: RevisionReceiver? }
    private let box = Mutex(Box())

    var receiver: RevisionReceiver? {
        get { box.withLock { $0.receiver } }
        set { box.withLock { $0.receiver = newValue } }
    }
}
