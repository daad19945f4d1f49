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
/// conflicting branches reach every node.
final class ChangesSender: Sendable {
    struct Options: Sendable {
        var since: UInt64 = 0
        var continuous = false
        var batchSize = 200
        var docIDs: Set<String>?
        /// `sync_gateway/bychannel`: only documents in these channels.
        var channels: Set<String>?
        var activeOnly = false
        /// Rev messages awaiting their reply at once (the peer commits them in groups,
        /// so this window bounds its transaction size).
        var revsInFlight = 512
    }

    private let store: DocumentStore
    private let connection: BLIPConnection
    private let options: Options
    private let progress: ReplicationProgress
    private let logger: Logger
    private let tracker: Mutex<SequenceTracker<UInt64>>
    /// Called with the sequence through which everything was delivered.
    private let onCheckpoint: (@Sendable (UInt64) async -> Void)?
    private let caughtUp = Mutex(false)
    /// The channels the peer may read (nil: everything).
    private let visibleChannels: (@Sendable () async -> [String: UInt64]?)?

    init(
        store: DocumentStore, connection: BLIPConnection, options: Options, progress: ReplicationProgress,
        logger: Logger, onCheckpoint: (@Sendable (UInt64) async -> Void)? = nil,
        visibleChannels: (@Sendable () async -> [String: UInt64]?)? = nil
    ) {
        self.visibleChannels = visibleChannels
        self.store = store
        self.connection = connection
        self.options = options
        self.progress = progress
        self.logger = logger
        self.onCheckpoint = onCheckpoint
        tracker = Mutex(SequenceTracker(start: options.since))
    }

    /// The sequence through which the peer has everything.
    var delivered: UInt64 { tracker.withLock { $0.completed ?? options.since } }

    /// True when everything committed so far has been offered and delivered.
    var isCaughtUp: Bool {
        caughtUp.withLock { $0 } && tracker.withLock { $0.isIdle } && delivered >= store.committedSequence
    }

    /// Runs until caught up (one-shot) or until cancelled / the connection closes (continuous).
    ///
    /// `changes` messages go out one at a time from this loop, so the peer sees them
    /// in feed order (it tracks checkpoints in that order); the `rev`s they ask for
    /// are sent concurrently (up to `revsInFlight`) while the next batch is offered.
    func run() async throws {
        let revsLimiter = AsyncLimiter(limit: options.revsInFlight)
        var since = options.since
        try await withThrowingTaskGroup(of: Void.self) { group in
            while !Task.isCancelled && !connection.isClosed {
                let (listings, next) = try await nextBatch(since: since)
                if listings.isEmpty {
                    since = max(since, next)
                    if !caughtUp.withLock({ $0 }) {
                        caughtUp.withLock { $0 = true }
                        // An empty `changes` tells the peer it has caught up.
                        _ = try await connection.sendRequest(BLIPMessage(profile: ReplicationMessages.changes, body: Array("[]".utf8)))
                    }
                    if !options.continuous { break }
                    _ = await store.waitForChange(after: since, timeout: .seconds(30))
                    continue
                }
                let batch = makeBatch(listings)
                since = max(since, next)
                let answers = try await offer(batch)
                var wanted: [(entry: ReplicationMessages.ChangeEntry, index: Int, known: Set<RevID>)] = []
                for (position, entry) in batch.entries.enumerated() {
                    let index = batch.indices[position]
                    if position < answers.wanted.count, let known = answers.wanted[position] {
                        wanted.append((entry, index, known))
                    } else {
                        complete(index)
                    }
                }
                // All wanted revisions of the batch in one read.
                let outgoing = (try? await store.revisionsToSend(wanted.map { ($0.entry.docID, $0.entry.revID) }))
                    ?? Array(repeating: nil, count: wanted.count)
                for (item, revision) in zip(wanted, outgoing) {
                    await revsLimiter.acquire()
                    group.addTask {
                        defer { revsLimiter.release() }
                        await self.sendRev(item.entry, revision, knownAncestors: item.known, maxHistory: answers.maxHistory)
                        self.complete(item.index)
                    }
                }
            }
            try await group.waitForAll()
        }
        if let onCheckpoint { await onCheckpoint(delivered) }
    }

    /// The next documents to offer after `since`, and the sequence to continue from.
    /// A peer limited to channels (a user, or a `sync_gateway/bychannel` filter) gets
    /// only their documents; a channel granted after `since` is sent whole (backfill),
    /// in one batch, after which the feed continues from the committed sequence.
    private func nextBatch(since: UInt64) async throws(StoreError) -> ([DocumentListing], UInt64) {
        var channels = await visibleChannels?()
        if let requested = options.channels {
            channels = channels.map { $0.filter { requested.contains($0.key) } }
                ?? Dictionary(uniqueKeysWithValues: requested.map { ($0, UInt64(0)) })
        }
        guard let channels, channels["*"] == nil else {
            let listings = try await store.changes(
                since: since, limit: options.batchSize, docIDs: options.docIDs, activeOnly: options.activeOnly)
            return (listings, listings.last?.sequence ?? since)
        }
        let committed = store.committedSequence
        let backfill = channels.values.contains { $0 > since }
        let limit = backfill ? nil : options.batchSize
        let changes = try await store.changes(since: since, channels: channels, limit: limit, activeOnly: options.activeOnly)
        var listings = changes.filter { !$0.isRemoval }.map(\.listing)
        if let docIDs = options.docIDs { listings = listings.filter { docIDs.contains($0.docID) } }
        let highest = changes.map(\.sequence).max() ?? since
        let complete = limit.map { changes.count < $0 } ?? true
        return (listings, complete ? max(highest, committed) : highest)
    }

    private struct Batch: Sendable {
        var entries: [ReplicationMessages.ChangeEntry]
        /// Tracker index of each entry's document.
        var indices: [Int]
    }

    /// Entries for every leaf of each changed document (one tracker part per leaf).
    ///
    /// All leaves, not only those newer than some sequence: the feed lists a
    /// document once, at its latest change, so a branch stored earlier may never
    /// have been offered. The peer answers "have it" for the ones it knows.
    private func makeBatch(_ listings: [DocumentListing]) -> Batch {
        var batch = Batch(entries: [], indices: [])
        tracker.withLock { tracker in
            for listing in listings {
                let offered = listing.tree.leaves
                let index = tracker.add(listing.sequence, parts: offered.count)
                for rev in offered {
                    let deleted = listing.tree.node(for: rev)?.deleted ?? false
                    batch.entries.append(.init(sequence: .int(Int64(listing.sequence)), docID: listing.docID, revID: rev, deleted: deleted))
                    batch.indices.append(index)
                }
            }
        }
        return batch
    }

    /// Sends one `changes` message; returns, per entry, the ancestors the peer knows
    /// (nil = it does not want the revision) and its `maxHistory`.
    private func offer(_ batch: Batch) async throws -> (wanted: [Set<RevID>?], maxHistory: Int) {
        let body = JSON.array(batch.entries.map(\.json)).canonicalBytes()
        let reply = try await connection.sendRequest(BLIPMessage(profile: ReplicationMessages.changes, body: body))
        progress.update { $0.docsCheckedPush += batch.entries.count }
        let answers = (try? JSON.parse(reply.body))?.arrayValue ?? []
        let wanted: [Set<RevID>?] = answers.map { answer in
            answer.arrayValue.map { Set($0.compactMap { $0.stringValue.flatMap(RevID.init) }) }
        }
        return (wanted, reply["maxHistory"].flatMap(Int.init) ?? store.configuration.revsLimit)
    }

    private func complete(_ index: Int) {
        tracker.withLock { $0.complete(index) }
    }

    /// Sends one revision (or `norev` when it cannot), waiting for the peer's reply.
    private func sendRev(
        _ entry: ReplicationMessages.ChangeEntry, _ outgoing: OutgoingRevision?, knownAncestors: Set<RevID>, maxHistory: Int
    ) async {
        guard let outgoing, let body = ReplicationMessages.outgoingBody(outgoing) else {
            await sendNoRev(entry, code: 404, reason: "revision not found")
            return
        }
        var history: [String] = []
        for rev in outgoing.history.prefix(max(0, maxHistory - 1)) {
            history.append(rev.description)
            if knownAncestors.contains(rev) { break }
        }
        var message = BLIPMessage(
            profile: ReplicationMessages.rev,
            properties: [
                ("id", entry.docID), ("rev", entry.revID.description), ("sequence", entry.sequence.canonicalString),
            ],
            body: body)
        if !history.isEmpty { message["history"] = history.joined(separator: ",") }
        if outgoing.deleted { message["deleted"] = "1" }
        message.compressed = message.body.count >= 4096
        do {
            _ = try await connection.sendRequest(message)
            progress.update { $0.docsPushed += 1 }
        } catch {
            progress.update {
                $0.docsFailedPush += 1
                $0.lastError = "push \(entry.docID) \(entry.revID): \(error)"
            }
            logger.debug("peer rejected \(entry.docID) \(entry.revID): \(error)")
        }
    }

    private func sendNoRev(_ entry: ReplicationMessages.ChangeEntry, code: Int, reason: String) async {
        let message = BLIPMessage(
            profile: ReplicationMessages.norev,
            properties: [
                ("id", entry.docID), ("rev", entry.revID.description), ("sequence", entry.sequence.canonicalString),
                ("error", String(code)), ("reason", reason),
            ],
            noReply: true)
        try? await connection.sendNoReply(message)
        progress.update { $0.docsFailedPush += 1 }
    }
}
