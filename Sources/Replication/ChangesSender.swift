import BLIP
import DocumentModel
import DocumentStore
import Foundation
import Logging
import Synchronization

/// Sends this database's changes to the peer: `changes` messages in batches, then
/// a `rev` for every revision the peer asks for, many in flight at once. It serves
/// a peer's `subChanges` and drives an active push alike.
///
/// Every leaf revision of a changed document is offered (not only the winner), so
/// conflicting branches reach every node; a client in no-conflicts mode is offered
/// the winner only (`Options.winnerOnly`).
final class ChangesSender: Sendable {
    struct Options: Sendable {
        var since: UInt64 = 0
        var continuous = false
        var batchSize = 200
        var docIDs: Set<String>?
        /// `sync_gateway/bychannel`: only documents in these channels.
        var channels: Set<String>?
        /// Couchbase Lite's `activeOnly` (a first pull into an empty database): documents
        /// deleted before the feed started are not sent. Deleted later, they are: Sync
        /// Gateway too sends deletions once the client has caught up.
        var activeOnly = false
        /// How the peer speaks (`PeerDialect`): what is offered and how follows from it.
        var dialect = PeerDialect()
        /// An active push (else the feed serves the peer's `subChanges`).
        var pushing = false
        /// Rev messages awaiting their reply at once (the peer commits them in groups,
        /// so this window bounds its transaction size).
        var revsInFlight = 2048

        init(dialect: PeerDialect = PeerDialect(), pushing: Bool = false) {
            self.dialect = dialect
            self.pushing = pushing
        }

        /// Offer only each document's winning revision (`PeerDialect.offersWinnersOnly`):
        /// never a losing branch, nor the tombstone that resolved one, which would turn a
        /// client's live copy into a deletion.
        var winnerOnly: Bool { dialect.offersWinnersOnly }
        /// The peer names documents by versions (`BLIP_3+CBMobile_4`): each entry offers the
        /// revision's current version, and a `rev` carries its vector (`rev` + `history`).
        var versionVectors: Bool { dialect.namesByVersions }
        /// Offer with `proposeChanges` (an active push to a version-vector peer, as Couchbase
        /// Lite 4 pushes): see `ChangesSender+Propose.swift`.
        var proposes: Bool { pushing && dialect.proposesOnPush }
    }

    let store: DocumentStore
    let connection: CollectionLink
    let options: Options
    let progress: ReplicationProgress
    let logger: Logger
    private let tracker: Mutex<SequenceTracker<UInt64>>
    /// Called with the sequence through which everything was delivered.
    private let onCheckpoint: (@Sendable (UInt64) async -> Void)?
    private let caughtUp = Mutex(false)
    /// The feed position every document at or below which has been added to the tracker
    /// (offered, or skipped as the peer's own); nil before the first page.
    private let scanned = Mutex<UInt64?>(nil)
    /// The channels the peer may read (nil: everything).
    private let visibleChannels: (@Sendable () async throws -> [String: UInt64]?)?
    /// The channels the previous page was read with (a channel-limited feed), to see
    /// which ones the peer lost since.
    private let lastChannels = Mutex<Set<String>?>(nil)
    /// The channels the peer lost after a sequence (see `PeerAccess.lostChannels`).
    private let lostChannels: (@Sendable (UInt64) async throws -> Set<String>)?
    /// Revisions the peer offered over this connection: not offered back to it.
    private let peerHas: PeerRevisions?
    /// What a Shoal peer holds by the mesh's knowledge (`MeshKnowledge`): not offered to it.
    let coverage: PeerCoverage?
    /// With `Options.activeOnly`: the committed sequence when the feed started. Documents
    /// deleted at or before it are left out; deletions after it are sent.
    private let activeOnlyThrough: UInt64

    /// A document offered as "access lost" (Sync Gateway 3's flags) instead of its leaves.
    struct LostAccess: Sendable {
        var sequence: UInt64
        var rev: RevID
        var flags: Int
    }

    /// A page of the feed: documents in feed order, for each whether it is offered as
    /// lost (empty when none is), and the sequence to continue from.
    typealias Page = (page: [ChangedDocument], lost: [LostAccess?], next: UInt64)

    init(
        store: DocumentStore, connection: CollectionLink, options: Options, progress: ReplicationProgress,
        logger: Logger, peerHas: PeerRevisions? = nil, coverage: PeerCoverage? = nil,
        onCheckpoint: (@Sendable (UInt64) async -> Void)? = nil,
        visibleChannels: (@Sendable () async throws -> [String: UInt64]?)? = nil,
        lostChannels: (@Sendable (UInt64) async throws -> Set<String>)? = nil
    ) {
        self.peerHas = peerHas
        self.coverage = coverage
        self.visibleChannels = visibleChannels
        self.lostChannels = lostChannels
        self.store = store
        self.connection = connection
        self.options = options
        self.progress = progress
        self.logger = logger
        self.onCheckpoint = onCheckpoint
        tracker = Mutex(SequenceTracker(start: options.since))
        activeOnlyThrough = store.committedSequence
        progress.recordSent(store, through: options.since, starting: true)
    }

    /// The sequence through which the peer has everything.
    var delivered: UInt64 { tracker.withLock { $0.completed ?? options.since } }

    /// The local sequence through which the peer acknowledged everything: what it
    /// answered, and once nothing is in flight, the whole feed read so far (sequences no
    /// document holds any more, documents the peer had, included).
    var acknowledged: UInt64 {
        // The position first: everything at or below it was in the tracker before it was set.
        let position = scanned.withLock { $0 }
        return tracker.withLock { tracker in
            let completed = tracker.completed ?? options.since
            guard tracker.isIdle, let position else { return completed }
            return max(completed, position)
        }
    }

    /// Tells the link's progress how far the peer acknowledged, and that the feed moved.
    private func reportAcknowledged() {
        progress.recordSent(store, through: acknowledged)
    }

    /// True when everything committed so far has been offered and delivered.
    var isCaughtUp: Bool {
        caughtUp.withLock { $0 } && tracker.withLock { $0.isIdle } && delivered >= store.committedSequence
    }

    /// `changes` messages in flight at once: the peer answers them in order (its
    /// handler is serial), and the next ones are already on the wire while it works.
    static let offersInFlight = 4

    /// Runs until caught up (one-shot) or until cancelled / the connection closes (continuous).
    ///
    /// `changes` messages are queued from this loop, one after the other, so the peer
    /// sees them in feed order (it tracks checkpoints in that order); up to
    /// `offersInFlight` of them await their answers at once. The `rev`s each answer
    /// asks for are queued on the connection all at once (up to `revsInFlight`
    /// unanswered), their replies handled by callbacks.
    func run() async throws {
        let revsLimiter = AsyncLimiter(limit: options.revsInFlight)
        let offersLimiter = AsyncLimiter(limit: Self.offersInFlight)
        let failure = FirstFailure()
        var since = options.since
        // The next page of the feed is read while the current one is offered.
        var prefetched: Task<Page, any Error>?
        defer { prefetched?.cancel() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            while !Task.isCancelled && !connection.isClosed {
                let (page, lost, next): ([ChangedDocument], [LostAccess?], UInt64)
                if let prefetched {
                    (page, lost, next) = try await prefetched.value
                } else {
                    (page, lost, next) = try await readPage(since: since)
                }
                prefetched = nil
                since = max(since, next)
                if page.isEmpty {
                    scanned.withLock { $0 = since }
                    reportAcknowledged()
                    if !caughtUp.withLock({ $0 }) {
                        caughtUp.withLock { $0 = true }
                        // An empty `changes` tells the peer it has caught up.
                        _ = try await connection.sendRequest(
                            options.proposes ? Self.proposeChangesRequest(body: Array("[]".utf8))
                                : ReplicationMessages.changesRequest(body: Array("[]".utf8)))
                    }
                    if !options.continuous { break }
                    _ = await store.waitForChange(after: since, timeout: .seconds(30))
                    continue
                }
                if page.count == options.batchSize {
                    let from = since
                    prefetched = Task { try await self.readPage(since: from) }
                }
                let versions = options.versionVectors ? try await currentVersions(page) : [:]
                let held = await heldByPeerWaiting(page)
                var batch = makeBatch(
                    page.map(\.listing), lost: lost, versions: versions, vectors: page.map(\.offeredWinnerVector), held: held)
                batch.vectors = versions
                scanned.withLock { $0 = since }
                reportAcknowledged()
                // The feed moved (the backlog the peer is told about changed).
                progress.sendSignal.notify()
                // Everything on the page came from the peer itself: nothing to offer
                // (an empty `changes` would tell it we caught up).
                if batch.entries.isEmpty { continue }
                await offersLimiter.acquire()
                let reply = offer(batch)  // queued now, in feed order
                group.addTask {
                    defer { offersLimiter.release() }
                    do {
                        let answers = try await self.answers(to: reply, batch: batch)
                        try await self.sendRevs(batch: batch, page: page, answers: answers, limiter: revsLimiter)
                    } catch {
                        failure.record(error)
                        throw error
                    }
                }
                // A failed offer ends the run.
                if let error = failure.error { throw error }
            }
            try await group.waitForAll()
        }
        await revsLimiter.waitUntilIdle()
        if let onCheckpoint { await onCheckpoint(delivered) }
    }

    /// The next documents to offer after `since`, and the sequence to continue from.
    /// A peer limited to channels (a user, or a `sync_gateway/bychannel` filter) gets
    /// only their documents (their bodies are read when sent); a channel granted after
    /// `since` is sent whole (backfill) in one page, after which the feed continues from
    /// the committed sequence. Such a peer is also told, as Sync Gateway 3 does, which
    /// documents left its channels (flag 4) and, for channels it lost during this
    /// connection, which documents it can no longer read (flag 2).
    private func readPage(since: UInt64) async throws -> Page {
        var channels = try await visibleChannels?()
        let readable = channels.map { Set($0.keys) }
        if let requested = options.channels {
            channels = channels.map { $0.filter { requested.contains($0.key) } }
                ?? Dictionary(uniqueKeysWithValues: requested.map { ($0, UInt64(0)) })
        }
        guard let channels, channels["*"] == nil else {
            // A page that is not full read everything committed before it started: the
            // feed continues from there (a sequence no document holds any more, e.g.
            // after a purge, must not keep waking the sender).
            let committed = store.committedSequence
            let page = try await store.changesForSending(
                since: since, limit: options.batchSize, docIDs: options.docIDs, activeOnly: options.activeOnly,
                activeOnlyThrough: activeOnlyThrough)
            let highest = page.last?.listing.sequence ?? since
            return (page, [], page.count < options.batchSize ? max(highest, committed) : highest)
        }
        let revoked = try await revokedDocuments(channels: Set(channels.keys), readable: readable ?? Set(channels.keys), at: since)
        let committed = store.committedSequence
        let backfill = channels.values.contains { $0 > since }
        let limit = backfill ? nil : options.batchSize
        let changes = try await store.changes(
            since: since, channels: channels, limit: limit, activeOnly: options.activeOnly, activeOnlyThrough: activeOnlyThrough)
        var entries: [(listing: DocumentListing, lost: LostAccess?)] = revoked.map {
            ($0, LostAccess(sequence: since, rev: $0.winner, flags: ReplicationMessages.ChangeEntry.revokedFlag))
        }
        let revokedIDs = Set(revoked.map(\.docID))
        for change in changes where !(change.isRemoval && revokedIDs.contains(change.listing.docID)) {
            let removal = change.removalRev.map {
                LostAccess(sequence: change.sequence, rev: $0, flags: ReplicationMessages.ChangeEntry.removedFlag)
            }
            entries.append((change.listing, change.isRemoval ? removal : nil))
        }
        if let docIDs = options.docIDs { entries = entries.filter { docIDs.contains($0.listing.docID) } }
        let highest = changes.map(\.sequence).max() ?? since
        let complete = limit.map { changes.count < $0 } ?? true
        return (entries.map { ChangedDocument(listing: $0.listing) }, entries.map(\.lost), complete ? max(highest, committed) : highest)
    }

    /// The documents of channels the peer could read and no longer can, that no channel
    /// it still reads shows: on the first page, channels it lost after `since` (while it
    /// was away); later, channels it read on the previous page (lost during this
    /// connection). They are offered at `since`, before anything newer.
    private func revokedDocuments(channels: Set<String>, readable: Set<String>, at since: UInt64) async throws -> [DocumentListing] {
        let previous = lastChannels.withLock { last in
            defer { last = channels }
            return last
        }
        var lost: Set<String>
        if let previous {
            lost = previous.subtracting(channels)
        } else if since > 0, let lostChannels {
            lost = try await lostChannels(since).subtracting(channels)
            if let requested = options.channels { lost.formIntersection(requested) }
        } else {
            return []
        }
        guard !lost.isEmpty else { return [] }
        let documents = try await store.documents(onlyIn: lost, notIn: readable)
        if !documents.isEmpty {
            logger.info("peer lost access to \(lost.sorted()): \(documents.count) documents offered as revoked")
        }
        return documents
    }

    /// Queues a `rev` for every revision of the batch the peer asked for (a `norev`
    /// for one that cannot be read); waits only while `revsInFlight` are unanswered.
    private func sendRevs(
        batch: Batch, page: [ChangedDocument], answers: (wanted: [Set<RevID>?], maxHistory: Int), limiter: AsyncLimiter
    ) async throws {
        var wanted: [(entry: ReplicationMessages.ChangeEntry, index: Int, known: Set<RevID>, revision: OutgoingRevision?)] = []
        var missing: [Int] = []  // positions in `wanted` whose revision is not the stored winner
        var held = 0
        defer { progress.update { $0.revisions.offeredHeld += held } }
        for (position, entry) in batch.entries.enumerated() {
            let index = batch.indices[position]
            guard position < answers.wanted.count, let known = answers.wanted[position] else {
                if !entry.lostAccess { held += 1 }
                complete(index)
                continue
            }
            if entry.lostAccess {
                // A peer that asks for an access-lost entry (it read the flags as
                // "deleted") gets no body: the document is no longer its to read.
                await sendNoRev(entry, code: 403, reason: "access lost")
                complete(index)
                continue
            }
            let revision = page[batch.pages[position]].outgoing(entry.revID)
            if revision == nil { missing.append(wanted.count) }
            wanted.append((entry, index, known, revision))
        }
        if !missing.isEmpty {
            // Other leaves (conflicts) and revisions not in the row, in one read.
            // A failed read fails the batch (and the feed): answering `norev` would
            // tell the peer these revisions do not exist.
            let read = try await store.revisionsToSend(missing.map { (wanted[$0].entry.docID, wanted[$0].entry.revID) })
            for (position, revision) in zip(missing, read) { wanted[position].revision = revision }
        }
        var messages: [BLIPMessage] = []
        var sent: [(entry: ReplicationMessages.ChangeEntry, index: Int)] = []
        for item in wanted {
            guard let message = revMessage(
                item.entry, item.revision, knownAncestors: item.known, maxHistory: answers.maxHistory,
                vector: batch.vectors[item.entry.docID])
            else {
                await sendNoRev(item.entry, code: 404, reason: "revision not found")
                complete(item.index)
                continue
            }
            messages.append(message)
            sent.append((item.entry, item.index))
        }
        var offset = 0
        while offset < messages.count {
            let count = min(limiter.limit, messages.count - offset)
            await limiter.acquire(count)
            let chunk = Array(sent[offset..<(offset + count)])
            connection.sendRequests(Array(messages[offset..<(offset + count)])) { [self] index, result in
                if case .failure(let error) = result, RevisionReceiver.isStoreFailure(error) {
                    // The peer's store could not take it (its disk is full): not refused.
                    // It stays pending, so that the checkpoint stops before it, and the
                    // connection ends (the peer closes it too): the next one sends it again.
                    storeRefused(chunk[index].entry, error)
                } else {
                    revDelivered(chunk[index].entry, result)
                    complete(chunk[index].index)
                }
                limiter.release()
            }
            offset += count
        }
    }

    struct Batch: Sendable {
        var entries: [ReplicationMessages.ChangeEntry]
        /// Tracker index of each entry's document.
        var indices: [Int]
        /// Position of each entry's document in the page.
        var pages: [Int]
        /// The vector sent for each document (a version-vector peer): its winner's, or
        /// what `proposalVectors` makes of it.
        var vectors: [String: VersionVector] = [:]
        /// The ancestors of each offered revision (proposals over revision trees): a 409
        /// naming one of them is the peer's older revision, not a conflict.
        var ancestors: [String: Set<String>] = [:]
    }

    /// Entries for every leaf of each changed document (one tracker part per leaf).
    ///
    /// All leaves, not only those newer than some sequence: the feed lists a
    /// document once, at its latest change, so a branch stored earlier may never
    /// have been offered. The peer answers "have it" for the ones it knows; those it
    /// offered us itself over this connection (`PeerRevisions`) are not offered at all.
    private func makeBatch(
        _ listings: [DocumentListing], lost: [LostAccess?], versions: [String: VersionVector], vectors: [OfferedVector],
        held: [Set<RevID>] = []
    ) -> Batch {
        var batch = Batch(entries: [], indices: [], pages: [])
        var notOffered = 0
        var yours: [UInt64] = []
        defer {
            if notOffered > 0 { progress.update { $0.revisions.notOffered += notOffered } }
            coverage?.peerHolds(yours)
        }
        tracker.withLock { tracker in
            for (page, listing) in listings.enumerated() {
                if page < lost.count, let lost = lost[page] {
                    let index = tracker.add(lost.sequence, parts: 1)
                    batch.entries.append(.init(sequence: .int(Int64(lost.sequence)), docID: listing.docID, revID: lost.rev, flags: lost.flags))
                    batch.indices.append(index)
                    batch.pages.append(page)
                    continue
                }
                var offered = options.winnerOnly ? listing.tree.winner.map { [$0] } ?? [] : listing.tree.leaves
                if let peerHas {
                    // The winner's vector as read with the feed: offered again when it grew here.
                    let winnerVector = page < vectors.count ? vectors[page] : .unknown
                    offered.removeAll { rev in
                        peerHas.has(docID: listing.docID, rev: rev, vector: rev == listing.tree.winner ? winnerVector : .unknown)
                    }
                }
                if page < held.count, !held[page].isEmpty {
                    let before = offered.count
                    offered.removeAll { held[page].contains($0) }
                    notOffered += before - offered.count
                }
                // Every leaf left out as the peer's: it holds this entry of our feed.
                if offered.isEmpty, !listing.tree.leaves.isEmpty { yours.append(listing.sequence) }
                let index = tracker.add(listing.sequence, parts: offered.count)
                for rev in offered {
                    let deleted = listing.tree.node(for: rev)?.deleted ?? false
                    var entry = ReplicationMessages.ChangeEntry(
                        sequence: .int(Int64(listing.sequence)), docID: listing.docID, revID: rev, deleted: deleted)
                    if rev == listing.tree.winner, let vector = versions[listing.docID] { entry.version = vector.current.description }
                    // Shoal peers (those `rev`s carry `shoal-vv` to) learn the winner's vector
                    // even when they have the revision (identical edits, §10.9 "Convergence").
                    if rev == listing.tree.winner, options.dialect.carriesShoalVectors {
                        entry.vector = vectors[page]
                    }
                    batch.entries.append(entry)
                    batch.indices.append(index)
                    batch.pages.append(page)
                    if options.proposes, !options.versionVectors {
                        batch.ancestors["\(listing.docID)\u{0}\(rev)"] = Set(listing.tree.history(of: rev).dropFirst().map(\.description))
                    }
                }
            }
        }
        return batch
    }

    /// The winners' vectors of a page, for a peer that names revisions by versions: as
    /// read with the bodies, the others (a channel-limited feed, and documents with other
    /// leaves, whose versions the vector shown takes in: `DocumentStore.winnerVersions`)
    /// in one more read.
    private func currentVersions(_ page: [ChangedDocument]) async throws -> [String: VersionVector] {
        var versions: [String: VersionVector] = [:]
        var unread: [String] = []
        for document in page {
            if let vector = document.winnerVersion() { versions[document.listing.docID] = vector } else { unread.append(document.listing.docID) }
        }
        if !unread.isEmpty {
            for (docID, winner) in try await store.winnerVersions(unread) { versions[docID] = winner.vector }
        }
        return versions
    }

    /// Sends one `changes` message; returns, per entry, the ancestors the peer knows
    /// (nil = it does not want the revision) and its `maxHistory`.
    /// Queues one `changes` message for the batch; its reply comes later.
    private func offer(_ batch: Batch) -> PendingReply {
        progress.update { $0.revisions.offered += batch.entries.count }
        if options.proposes { return propose(batch) }
        let body = JSON.array(batch.entries.map(\.json)).canonicalBytes()
        var request = ReplicationMessages.changesRequest(body: body)
        if options.dialect.carriesShoalVectors, let vectors = ReplicationMessages.rowVectors(batch.entries) {
            request[ReplicationMessages.rowVectorsProperty] = vectors
        }
        return queue(request)
    }

    /// Queues `request` now (in order with the feed's other offers); its reply comes later.
    func queue(_ request: BLIPMessage) -> PendingReply {
        let reply = PendingReply()
        connection.sendRequests([request]) { _, result in
            reply.fulfill(result)
        }
        return reply
    }

    /// Per entry, the ancestors the peer knows (nil = it does not want the revision),
    /// and its `maxHistory`.
    private func answers(to pending: PendingReply, batch: Batch) async throws -> (wanted: [Set<RevID>?], maxHistory: Int) {
        if options.proposes { return (try await proposalAnswers(to: pending, batch: batch), store.configuration.revsLimit) }
        let reply = try await pending.value.get()
        progress.update { $0.docsCheckedPush += batch.entries.count }
        let answers = (try? JSON.parse(reply.body))?.arrayValue ?? []
        let wanted: [Set<RevID>?] = answers.map { answer in
            answer.arrayValue.map { Set($0.compactMap { $0.stringValue.flatMap(RevID.init) }) }
        }
        return (wanted, reply["maxHistory"].flatMap(Int.init) ?? store.configuration.revsLimit)
    }

    private func complete(_ index: Int) {
        tracker.withLock { $0.complete(index) }
        reportAcknowledged()
    }

    /// The `rev` message for a revision, or nil when it cannot be sent (then a
    /// `norev` goes instead).
    private func revMessage(
        _ entry: ReplicationMessages.ChangeEntry, _ outgoing: OutgoingRevision?, knownAncestors: Set<RevID>, maxHistory: Int,
        vector proposed: VersionVector? = nil
    ) -> BLIPMessage? {
        guard let outgoing, let body = ReplicationMessages.outgoingBody(outgoing) else { return nil }
        if options.versionVectors {
            // The vector: `rev` its current version, `history` the rest (CBMobile_4).
            // The winner's as the peer is shown it (`currentVersions`), else the stored one.
            guard let vector = proposed ?? (try? outgoing.version()) else { return nil }
            var properties = [
                ("Profile", ReplicationMessages.rev), ("id", entry.docID), ("rev", vector.current.description),
                ("sequence", entry.sequence.canonicalString),
            ]
            if let history = vector.historyText(style: .syncGateway) { properties.append(("history", history)) }
            if outgoing.deleted { properties.append(("deleted", "1")) }
            return BLIPMessage(properties: properties, body: body, compressed: body.count >= 4096)
        }
        var history: [String] = []
        for rev in outgoing.history.prefix(max(0, maxHistory - 1)) {
            history.append(rev.description)
            if knownAncestors.contains(rev) { break }
        }
        var properties = [
            ("Profile", ReplicationMessages.rev), ("id", entry.docID), ("rev", entry.revID.description),
            ("sequence", entry.sequence.canonicalString),
        ]
        if !history.isEmpty { properties.append(("history", history.joined(separator: ","))) }
        if outgoing.deleted { properties.append(("deleted", "1")) }
        // Shoal peers (not clients) get the revision's vector too, unless it is only the
        // revision's legacy version, which the receiver derives itself.
        if options.dialect.carriesShoalVectors, let text = outgoing.storedVersionText {
            properties.append((ReplicationMessages.versionVectorProperty, text))
        }
        return BLIPMessage(properties: properties, body: body, compressed: body.count >= 4096)
    }

    /// The peer answered a `rev` (or the connection failed it).
    private func revDelivered(_ entry: ReplicationMessages.ChangeEntry, _ result: Result<BLIPMessage, BLIPError>) {
        switch result {
        case .success:
            progress.update { $0.docsPushed += 1 }
        case .failure(let error) where error.isConnectionLoss:
            // Not refused: the connection ended first. The checkpoint stays before it, so
            // the next connection sends it again; it is not a failed document.
            logger.debug("\(entry.docID) \(entry.revID) not answered: \(error)")
        case .failure(let error):
            progress.update {
                $0.docsFailedPush += 1
                $0.lastError = "push \(entry.docID) \(entry.revID): \(error)"
            }
            progress.recordRefused()
            logger.debug("peer rejected \(entry.docID) \(entry.revID): \(error)")
        }
    }

    /// A `rev` the peer's store could not take (`RevisionReceiver.isStoreFailure`).
    private func storeRefused(_ entry: ReplicationMessages.ChangeEntry, _ error: BLIPError) {
        progress.update { $0.lastError = "push \(entry.docID) \(entry.revID): the peer could not store it: \(error)" }
        logger.info("the peer could not store \(entry.docID) \(entry.revID) (\(error.code)): it goes again on the next connection")
        Task { [connection] in await connection.close(error: BLIPError(code: error.code, message: "the peer's store could not take a revision: \(error.message)")) }
    }

    private func sendNoRev(_ entry: ReplicationMessages.ChangeEntry, code: Int, reason: String) async {
        let message = BLIPMessage(
            profile: ReplicationMessages.norev,
            properties: [
                ("id", entry.docID), ("rev", entry.version ?? entry.revID.description),
                ("sequence", entry.sequence.canonicalString), ("error", String(code)), ("reason", reason),
            ],
            noReply: true)
        try? await connection.sendNoReply(message)
        progress.update { $0.docsFailedPush += 1 }
    }
}
