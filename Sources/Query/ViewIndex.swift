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
        let signature = definition.signature
        do {
            state = try await store.auxiliaryWrite { db in try ViewStorage.openIndex(db, signature: signature) }
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
            if state.sequence >= goal, running == nil { return }
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
        while state.sequence < goal {
            let since = state.sequence
            let changes: [DocumentListing]
            do {
                changes = try await store.changes(since: since, limit: batchSize, includeBodies: true)
            } catch {
                throw ViewError.storage(error)
            }
            guard let last = changes.last else {
                // Nothing committed past our sequence yet (the goal may be a sequence still
                // committing): stop here, a later update goes on.
                break
            }
            try await index(changes, upTo: last.sequence)
        }
        if definition.reduce != nil { try await flushGroups() }
    }

    /// Maps one batch (off any transaction), then writes its rows in one transaction.
    private func index(_ changes: [DocumentListing], upTo sequence: UInt64) async throws {
        var documents: [[String: JSON]] = []
        var mapped: [String] = []
        var removed: [String] = []
        for listing in changes {
            if DesignDocument.isDesign(listing.docID) || listing.deleted || listing.body == nil {
                removed.append(listing.docID)
                continue
            }
            documents.append(Self.mapInput(listing))
            mapped.append(listing.docID)
        }
        var results: [Result<[(key: JSON, value: JSON)], JSError>] = []
        if !documents.isEmpty {
            do {
                results = try await functions.map(documents)
            } catch {
                let failure = ViewError.functionFailed("map function of view \(signature.prefix(8)) failed: \(error.message)")
                self.failure = failure
                logger.error("view index \(signature): \(failure.reason)")
                throw failure
            }
        }
        var rows = removed.map { ViewStorage.DocumentRows(docID: $0, rows: []) }
        var errors = 0
        for (docID, result) in zip(mapped, results) {
            switch result {
            case .success(let emitted):
                rows.append(ViewStorage.DocumentRows(docID: docID, rows: emitted))
            case .failure(let error):
                errors += 1
                logger.warning("view map function threw for \(docID), skipped: \(error.message)")
                rows.append(ViewStorage.DocumentRows(docID: docID, rows: []))
            }
        }
        let index = id
        let reduces = definition.reduce != nil
        let documentRows = rows
        let mapErrors = errors
        do {
            let (_, total) = try await store.auxiliaryWrite { db in
                try ViewStorage.apply(
                    db, index: index, documents: documentRows, sequence: sequence, mapErrors: mapErrors, reduces: reduces)
            }
            state.sequence = sequence
            state.rowCount = total
            state.mapErrors += Int64(errors)
        } catch {
            throw ViewError.storage(error)
        }
    }

    /// What a map function sees: the winning revision's body with `_id`, `_rev`, and
    /// `_conflicts` (the other live leaves, in winner order) when there are any.
    static func mapInput(_ listing: DocumentListing) -> [String: JSON] {
        var doc = listing.body ?? [:]
        doc["_id"] = .string(listing.docID)
        doc["_rev"] = .string(listing.winner.description)
        let conflicts = listing.tree.liveLeaves.filter { $0 != listing.winner }
        if !conflicts.isEmpty { doc["_conflicts"] = .array(conflicts.map { .string($0.description) }) }
        return doc
    }
}
