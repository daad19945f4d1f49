import BLIP
import Blocking
import DocumentModel
import DocumentStore
import Foundation
import Synchronization

/// Inserts received revisions in batches (group commit): while one transaction
/// commits, newly arrived revisions queue up and go together in the next one.
///
/// Revisions arrive without a task of their own: the connection's reader hands
/// over each `rev` message (`enqueue(message:responder:)`), or a handler that had to
/// fetch attachments first hands over the parsed update. A worker task takes what
/// is queued, parses the messages (on the blocking pool for large batches), saves them in
/// one transaction, and reports the outcome of the whole batch at once (`onBatch`),
/// so that the replies go out together after the commit. Two workers overlap: one
/// parses and prepares its batch while the other's transaction commits.
final class RevisionInserter: Sendable {
    /// What the receiver learns about one revision once its batch is done.
    struct Outcome: Sendable {
        var responder: BLIPResponder
        var docID: String?
        var revID: String?
        var result: Result<Void, BLIPError>
        /// The local sequence the revision was stored at (nil: not stored, or known already).
        var sequence: UInt64?
    }

    /// A revision about to be saved, with its sequence in the peer's feed (its `rev`'s
    /// `sequence`, when a number).
    typealias Arrival = (docID: String, rev: RevID, remoteSequence: UInt64)

    /// A received revision, parsed or not yet.
    enum Input: Sendable {
        case message(BLIPMessage)
        case update(DocumentUpdate)
    }

    private struct Item: Sendable {
        var input: Input
        var responder: BLIPResponder
        var remoteSequence: UInt64?
    }

    private struct State {
        var pending: [Item] = []
        /// Batches being parsed, prepared or committed (at most `maxConcurrentBatches`).
        var running = 0
    }

    /// Two batches at once: one is parsed and prepared (all cores) while the other
    /// commits (the database's single writer), so neither waits for the other.
    static let maxConcurrentBatches = 2

    private let store: DocumentStore
    private let maxBatch: Int
    /// The writer identity for the store's gate (nil: mesh or administrator).
    private let author: (any Sendable)?
    /// What the inserted revisions are recorded as (the peer they come from).
    private let origin: RevisionOrigin
    private let parse: @Sendable (BLIPMessage) throws(BLIPError) -> DocumentUpdate
    private let onBatch: @Sendable ([Outcome]) -> Void
    /// Told the revisions of each batch just before it is saved (nil: nobody asks).
    private let beforeSave: (@Sendable ([Arrival]) -> Void)?
    private let state = Mutex(State())

    /// `parse` turns a `rev` message into an update (runs on the worker, possibly on
    /// several threads at once); `onBatch` gets the outcomes of every batch.
    init(
        store: DocumentStore, author: (any Sendable)? = nil, origin: RevisionOrigin = .peer(node: nil), maxBatch: Int = 2000,
        parse: @escaping @Sendable (BLIPMessage) throws(BLIPError) -> DocumentUpdate,
        onBatch: @escaping @Sendable ([Outcome]) -> Void, beforeSave: (@Sendable ([Arrival]) -> Void)? = nil
    ) {
        self.beforeSave = beforeSave
        self.store = store
        self.author = author
        self.origin = origin
        self.maxBatch = maxBatch
        self.parse = parse
        self.onBatch = onBatch
    }

    /// Queues a `rev` message as received (parsed by the worker). Never blocks.
    func enqueue(message: BLIPMessage, responder: BLIPResponder) {
        enqueue(Item(input: .message(message), responder: responder, remoteSequence: message["sequence"].flatMap { UInt64($0) }))
    }

    /// Queues an update that is ready to save (from the `rev` whose `sequence` was
    /// `remoteSequence`). Never blocks.
    func enqueue(update: DocumentUpdate, responder: BLIPResponder, remoteSequence: UInt64? = nil) {
        enqueue(Item(input: .update(update), responder: responder, remoteSequence: remoteSequence))
    }

    private func enqueue(_ item: Item) {
        let start = state.withLock { state -> Bool in
            state.pending.append(item)
            guard state.running < Self.maxConcurrentBatches else { return false }
            state.running += 1
            return true
        }
        if start {
            Task { await self.work() }
        }
    }

    /// One worker: takes batches until the queue is empty. A second worker starts
    /// when revisions arrive while the first is busy.
    private func work() async {
        while true {
            let batch = state.withLock { state -> [Item] in
                let batch = Array(state.pending.prefix(maxBatch))
                state.pending.removeFirst(batch.count)
                if batch.isEmpty { state.running -= 1 }
                return batch
            }
            guard !batch.isEmpty else { return }
            onBatch(await insert(batch))
        }
    }

    private func insert(_ batch: [Item]) async -> [Outcome] {
        let parsed = await parseAll(batch)
        var updates: [DocumentUpdate] = []
        updates.reserveCapacity(batch.count)
        for case .success(let update) in parsed { updates.append(update) }
        if let beforeSave {
            var arrivals: [Arrival] = []
            for (item, parse) in zip(batch, parsed) {
                guard case .success(let update) = parse, let remote = item.remoteSequence, let rev = update.mode.revision else { continue }
                arrivals.append((update.docID, rev, remote))
            }
            beforeSave(arrivals)
        }
        var saved: [Result<WriteResult, StoreError>]
        do {
            saved = try await store.save(batch: updates, author: author, origin: origin)
        } catch {
            saved = Array(repeating: .failure(error), count: updates.count)
        }
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(batch.count)
        var next = 0
        for (item, parse) in zip(batch, parsed) {
            switch parse {
            case .failure(let error):
                var outcome = Outcome(responder: item.responder, result: .failure(error))
                if case .message(let message) = item.input {
                    outcome.docID = message["id"]
                    outcome.revID = message["rev"]
                }
                outcomes.append(outcome)
            case .success(let update):
                let result = saved[next].map { _ in () }.mapError { ReplicationMessages.error($0) }
                let sequence = try? saved[next].get().sequence
                next += 1
                outcomes.append(Outcome(
                    responder: item.responder, docID: update.docID,
                    revID: update.mode.revision?.description ?? update.version?.current.description, result: result,
                    sequence: sequence ?? nil))
            }
        }
        return outcomes
    }

    /// Parses the queued messages; large batches go to the blocking pool in pieces of
    /// 64 messages (a few milliseconds each), which run side by side.
    private func parseAll(_ batch: [Item]) async -> [Result<DocumentUpdate, BLIPError>] {
        let parseOne: @Sendable (Item) -> Result<DocumentUpdate, BLIPError> = { [parse] item in
            switch item.input {
            case .update(let update): return .success(update)
            case .message(let message): return Result { () throws(BLIPError) in try parse(message) }
            }
        }
        guard batch.count >= 64 else { return batch.map(parseOne) }
        return await BlockingPool.shared.map(batch, piece: 64, parseOne)
    }
}
