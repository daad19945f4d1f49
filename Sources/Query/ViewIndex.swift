import DocumentModel
import DocumentStore
import Foundation
import GRDB
import JSEngine
import Logging

/// One persistent view index (one view signature) of one database, and its updater.
///
/// `ViewIndex` owns bringing its rows up to date: it reads the documents changed since
/// the index's sequence from the changes feed in batches, maps them on the view's
/// JavaScript thread *outside* any transaction, then writes each batch's rows in one
/// short write transaction; reductions of the changed keys are recomputed once the rows
/// have caught up (`ViewIndex+Groups`). Updates are serialized: callers that ask while
/// one runs wait for it. A function that overruns its time budget marks the index failed
/// (`ViewError.functionFailed`) for the life of the process; writes never wait for it.
public actor ViewIndex {
    public nonisolated let signature: String
    public nonisolated let definition: ViewDefinition
    nonisolated let store: DocumentStore
    nonisolated let functions: ViewFunctions
    nonisolated let logger: Logger
    nonisolated let batchSize: Int
    /// The `view_indexes` row ID.
    nonisolated let id: Int64
    private(set) var state: ViewStorage.IndexState
    private var running: Task<Void, any Error>?
    private(set) var failure: ViewError?

    func setFailure(_ failure: ViewError) {
        self.failure = failure
        logger.error("view index \(signature): \(failure.reason)")
    }

    init(store: DocumentStore, definition: ViewDefinition, functions: ViewFunctions, logger: Logger, batchSize: Int) async throws(ViewError) {
        self.store = store
        self.definition = definition
        self.signature = definition.signature
        self.functions = functions
        self.logger = logger
        self.batchSize = batchSize
        let stored = IndexNamespace.of(store) + definition.signature
        do {
            state = try await store.auxiliaryWrite { db in try ViewStorage.openIndex(db, signature: stored) }
        } catch {
            throw .storage(error)
        }
        id = state.id
    }

    /// The sequence up to which documents are indexed (rows; reductions follow at the
    /// end of each update).
    public var sequence: UInt64 { state.sequence }
    /// Rows in the index.
    public var rowCount: Int64 { state.rowCount }
    /// Documents whose map threw (skipped), since the index was created.
    public var mapErrors: Int64 { state.mapErrors }

    /// Brings the index up to `target` (default: everything committed now). Waits for an
    /// update already under way instead of starting a second one.
    public func update(to target: UInt64? = nil) async throws(ViewError) {
        let goal = target ?? store.committedSequence
        while true {
            if let failure { throw failure }
            if state.sequence >= goal, running == nil, store.info().purgeSequence <= state.purgeSequence { return }
            if let current = running {
                // Wait for the update under way, then look again. Whoever resumes first
                // clears it (a finished task must not make waiters spin on the actor).
                _ = await current.result
                if running == current { running = nil }
                continue
            }
            let task = Task { try await self.catchUp(to: goal) }
            running = task
            let result = await task.result
            if running == task { running = nil }
            if case .failure(let error) = result {
                if let viewError = error as? ViewError { throw viewError }
                throw .functionFailed("\(error)")
            }
            return
        }
    }

    private func catchUp(to goal: UInt64) async throws {
        try await removePurged()
        // A pipeline: while batches are mapped (one per JavaScript heap of the view, in
        // parallel), the next one is read (on a reader connection) and the previous one's
        // rows are written (on the store's writer). Rows are written in sequence order.
        // An index that is empty as the update starts holds rows only for documents this
        // update wrote: the others need no lookup of old rows.
        var written: Set<Int64>? = state.rowCount == 0 ? [] : nil
        var reading: Task<[DocumentText], any Error>? = state.sequence < goal ? read(after: state.sequence) : nil
        var mapping: [(task: Task<MappedBatch, any Error>, upTo: UInt64)] = []
        var writing: Task<Void, any Error>?
        var heap = 0
        do {
            while let next = reading {
                let changes = try await next.value
                guard let last = changes.last else {
                    // Nothing committed past our sequence yet (the goal may be a sequence
                    // still committing): stop here, a later update goes on.
                    reading = nil
                    break
                }
                reading = last.sequence < goal ? read(after: last.sequence) : nil
                let known = written.map { all in Set(changes.lazy.map(\.number).filter { all.contains($0) }) }
                if written != nil { written!.formUnion(changes.lazy.map(\.number)) }
                let slot = heap
                heap += 1
                mapping.append((Task { try await self.map(changes, known: known, heap: slot) }, last.sequence))
                if mapping.count >= functions.mapHeaps { try await writeFirst(of: &mapping, after: &writing) }
            }
            while !mapping.isEmpty { try await writeFirst(of: &mapping, after: &writing) }
            try await writing?.value
        } catch {
            // Never leave a read, a map or a write running behind a failed update.
            reading?.cancel()
            _ = await reading?.result
            for (task, _) in mapping { _ = await task.result }
            _ = await writing?.result
            throw error
        }
        if definition.reduce != nil { try await flushGroups() }
    }

    /// Waits for the first of the batches being mapped, then starts writing its rows once
    /// the write under way (`writing`) is done.
    private func writeFirst(
        of mapping: inout [(task: Task<MappedBatch, any Error>, upTo: UInt64)], after writing: inout Task<Void, any Error>?
    ) async throws {
        let (task, upTo) = mapping.removeFirst()
        let batch = try await task.value
        try await writing?.value
        writing = Task { try await self.write(batch, upTo: upTo) }
    }

    /// Documents per batch are also bounded by their bodies' size.
    static let batchBytes = 8 << 20

    /// Starts reading the batch of changes after `sequence`.
    private func read(after sequence: UInt64) -> Task<[DocumentText], any Error> {
        let (store, limit) = (self.store, batchSize)
        return Task {
            do {
                return try await store.changedTexts(since: sequence, limit: limit, maxBytes: Self.batchBytes)
            } catch let error as StoreError {
                throw ViewError.storage(error)
            }
        }
    }

    /// Drops the rows of documents purged whole since the index last looked (a purged
    /// document leaves no trace in the changes feed): after any purge, the index's
    /// documents are looked up and the missing ones lose their rows.
    private func removePurged() async throws {
        let purgeSequence = store.info().purgeSequence
        guard purgeSequence > state.purgeSequence else { return }
        let index = id
        do {
            let indexed = try await store.auxiliaryRead { db in try ViewStorage.documents(db, index: index) }
            var gone: [ViewStorage.DocumentRows] = []
            for start in stride(from: 0, to: indexed.count, by: 500) {
                let chunk = indexed[start..<min(start + 500, indexed.count)]
                let numbers = try await store.documentNumbers(chunk.map(\.docID))
                // Gone, or purged and stored again under a new number.
                for document in chunk where numbers[document.docID] != document.number {
                    gone.append(ViewStorage.DocumentRows(docID: document.docID, number: document.number, rows: []))
                }
            }
            let (sequence, reduces, removed) = (state.sequence, definition.reduce != nil, gone)
            let (_, total) = try await store.auxiliaryWrite { db in
                try ViewStorage.setPurgeSequence(db, index: index, to: purgeSequence)
                return try ViewStorage.apply(
                    db, index: index, documents: removed, sequence: sequence, mapErrors: 0, reduces: reduces)
            }
            state.rowCount = total
            state.purgeSequence = purgeSequence
        } catch {
            throw ViewError.storage(error)
        }
    }

    /// One batch's new rows per document, and how many documents the map threw for.
    struct MappedBatch: Sendable {
        let documents: [ViewStorage.DocumentRows]
        let mapErrors: Int
    }

    /// Maps one batch on JavaScript heap `heap`, off any transaction. `known` (when the
    /// update started on an empty index) holds the documents that can have rows: the
    /// others skip the lookup.
    private func map(_ changes: [DocumentText], known: Set<Int64>?, heap: Int) async throws -> MappedBatch {
        var documents: [[UInt8]] = []
        var mapped: [DocumentText] = []
        var removed: [DocumentText] = []
        for listing in changes {
            if DesignDocument.isDesign(listing.docID) || listing.deleted || listing.body == nil {
                removed.append(listing)
                continue
            }
            documents.append(Self.mapInput(listing, body: listing.body!))
            mapped.append(listing)
        }
        var results: [Result<[(key: JSON, value: JSON)], JSError>] = []
        if !documents.isEmpty {
            do {
                results = try await functions.map(texts: documents, heap: heap)
            } catch {
                let failure = ViewError.functionFailed("map function of view \(signature.prefix(8)) failed: \(error.message)")
                self.failure = failure
                logger.error("view index \(signature): \(failure.reason)")
                throw failure
            }
        }
        func rows(_ listing: DocumentText, _ emitted: [(key: JSON, value: JSON)]) -> ViewStorage.DocumentRows {
            ViewStorage.DocumentRows(
                docID: listing.docID, number: listing.number, rows: emitted,
                hasRows: known?.contains(listing.number) ?? true)
        }
        var batch = removed.map { rows($0, []) }
        var errors = 0
        for (listing, result) in zip(mapped, results) {
            switch result {
            case .success(let emitted):
                batch.append(rows(listing, emitted))
            case .failure(let error):
                errors += 1
                logger.warning("view map function threw for \(listing.docID), skipped: \(error.message)")
                batch.append(rows(listing, []))
            }
        }
        return MappedBatch(documents: batch, mapErrors: errors)
    }

    /// Writes one mapped batch's rows in one transaction and advances the index to `sequence`.
    private func write(_ batch: MappedBatch, upTo sequence: UInt64) async throws {
        let index = id
        let reduces = definition.reduce != nil
        do {
            let (_, total) = try await store.auxiliaryWrite { db in
                try ViewStorage.apply(
                    db, index: index, documents: batch.documents, sequence: sequence, mapErrors: batch.mapErrors, reduces: reduces)
            }
            state.sequence = sequence
            state.rowCount = total
            state.mapErrors += Int64(batch.mapErrors)
        } catch {
            throw ViewError.storage(error)
        }
    }

    /// What a map function sees, as the JSON text of its argument list: the winning
    /// revision's stored body with `_id`, `_rev`, and `_conflicts` (the other live leaves,
    /// in winner order) when there are any, put first; the body's text is not re-encoded.
    static func mapInput(_ listing: DocumentText, body: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(body.count + listing.docID.utf8.count + 64)
        out.append(contentsOf: #"[{"_id":"#.utf8)
        out.append(contentsOf: JSON.string(listing.docID).canonicalBytes())
        out.append(contentsOf: #","_rev":"#.utf8)
        out.append(contentsOf: JSON.string(listing.winner.description).canonicalBytes())
        let conflicts = listing.tree.liveLeaves.filter { $0 != listing.winner }
        if !conflicts.isEmpty {
            out.append(contentsOf: #","_conflicts":"#.utf8)
            out.append(contentsOf: JSON.array(conflicts.map { .string($0.description) }).canonicalBytes())
        }
        // The stored body is a canonical object: `{` then members then `}`.
        if body.count > 2, body.first == UInt8(ascii: "{") {
            out.append(UInt8(ascii: ","))
            out.append(contentsOf: body.dropFirst())
        } else {
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
}
