import Blocking
import DocumentModel
import Foundation
import GRDB

extension DocumentStore {
    /// Saves one revision (see `DocumentUpdate.Mode`) in its own transaction.
    /// `author` is passed to the `RevisionGate` (nil: administrator or mesh); `origin`
    /// is recorded as where the revision came from (`RevisionOrigin`).
    public func save(
        _ update: DocumentUpdate, author: (any Sendable)? = nil, origin: RevisionOrigin = .local
    ) async throws(StoreError) -> WriteResult {
        let results = try await save(batch: [update], author: author, origin: origin)
        return try results[0].get()
    }

    /// Saves many revisions in one transaction. Each document succeeds or fails on its
    /// own (its error is in its slot); only a failure of the database itself throws.
    /// `author` is passed to the `RevisionGate` (nil: administrator or mesh); `origin`
    /// is recorded for every revision the transaction stores.
    public func save(
        batch updates: [DocumentUpdate], author: (any Sendable)? = nil, origin: RevisionOrigin = .local
    ) async throws(StoreError) -> [Result<WriteResult, StoreError>] {
        // Validation, attachment blobs (file I/O), canonical encoding and revision IDs
        // happen before the transaction, on the blocking pool for large batches.
        var prepared = await prepareAll(updates)
        await preEvaluateGate(&prepared, author: author)
        let outcome = try await write { [prepared] db in try self.commit(prepared, db: db, author: author, origin: origin) }
        finishCommit(outcome)
        return outcome.results
    }

    /// What one write transaction did.
    struct CommitOutcome: Sendable {
        var results: [Result<WriteResult, StoreError>] = []
    }

    /// Applies prepared updates inside the current write transaction, records `origin`
    /// for the sequences they got, and saves the counters (restored if the transaction
    /// rolls back). Call `finishCommit` after.
    func commit(
        _ prepared: [Result<PreparedUpdate, StoreError>], db: Database, author: (any Sendable)? = nil, origin: RevisionOrigin
    ) throws -> CommitOutcome {
        let context = WriteContext(
            revsLimit: configuration.revsLimit, maxSize: configuration.maxDocumentSize, blobs: blobs,
            gate: gate, author: author, clock: versionClock)
        return try updatingCounters(db) { counters in
            let first = counters.lastSequence + 1
            var outcome = CommitOutcome()
            outcome.results.reserveCapacity(prepared.count)
            for item in prepared {
                switch item {
                case .failure(let error):
                    outcome.results.append(.failure(error))
                case .success(let update):
                    do {
                        outcome.results.append(.success(try Self.apply(update, db: db, counters: &counters, context: context)))
                    } catch let error as StoreError where error.kind != .storage {
                        outcome.results.append(.failure(error))
                    }
                }
            }
            if counters.lastSequence >= first {
                try Self.recordOrigin(db, origin, first: first, last: counters.lastSequence)
            }
            try versionClock.persist(db)
            return outcome
        }
    }

    /// Runs `body` on the counters inside the current write transaction, saves what it
    /// changed, restores the in-memory counters if the transaction rolls back, and wakes
    /// the changes feeds when it commits with a new sequence. Every transaction that
    /// assigns sequences goes through here.
    func updatingCounters<T>(_ db: Database, _ body: (inout Counters) throws -> T) throws -> T {
        let before = counters.withLock { $0 }
        var counters = before
        let result = try body(&counters)
        try Self.saveCounters(db, counters, previous: before)
        self.counters.withLock { $0 = counters }
        let changed = counters.lastSequence != before.lastSequence
        let published = counters.lastSequence
        // The feeds (replication senders, longpoll) wake from the writer's thread as soon
        // as the commit returns, not a task hop later in the caller.
        db.afterNextTransaction { _ in
            if changed { self.notifier.publish(published) }
        } onRollback: { _ in
            self.counters.withLock { $0 = before }
        }
        return result
    }

    /// After a committed transaction: logs the writes (the changes feed was woken at
    /// the commit, by `updatingCounters`).
    func finishCommit(_ outcome: CommitOutcome) {
        if logger.logLevel <= .debug {
            for case .success(let result) in outcome.results {
                logger.debug("saved \(result.docID) \(result.revID) seq \(result.sequence.map(String.init) ?? "-")")
            }
        }
    }

    struct WriteContext {
        let revsLimit: Int
        let maxSize: Int
        let blobs: BlobStore
        let gate: (any RevisionGate)?
        let author: (any Sendable)?
        /// Times the revisions' versions (§10.9).
        let clock: VersionClock
    }

    /// An update whose properties were validated and whose inline attachments are
    /// already stored as blobs. Without attachments, its stored bytes (and, for an
    /// edit, its revision ID given the requested parent) are computed up front.
    struct PreparedUpdate: Sendable {
        let docID: String
        /// User properties (no `_attachments`), possibly still as canonical bytes.
        var properties: ObjectBody
        let attachments: [String: PendingAttachment]
        let deleted: Bool
        let mode: DocumentUpdate.Mode
        /// `DocumentUpdate.noConflicts`.
        var noConflicts = false
        /// `DocumentUpdate.version`.
        var version: VersionVector?
        /// `DocumentUpdate.versionText`.
        var versionText: String?
        /// Canonical JSON of `properties` when there are no attachments.
        var encoded: [UInt8]?
        /// The revision ID for an edit on its requested parent (valid when that parent is used).
        var editRevision: RevID?
        /// The gate's outcome computed before the transaction, if it was.
        var gateOutcome: GateOutcome?

        /// New documents are inserted without looking for an existing row first:
        /// creations, and replicated revisions that come with their whole history.
        var insertsOptimistically: Bool {
            guard encoded != nil else { return false }
            switch mode {
            case .edit(let parent): return parent == nil
            case .replicate(let history): return history.last?.generation == 1
            }
        }
    }

    /// Updates per piece of a batch prepared on the blocking pool: a piece takes a few
    /// milliseconds (about 10 µs an update in a release build).
    static let preparePiece = 128

    /// Prepares every update. A few updates without inline attachment data (microseconds
    /// of work) are prepared on the calling thread; a batch, or an update whose inline
    /// data becomes a blob (a file written and fsynced), goes to the blocking pool in
    /// pieces of `preparePiece`, which run side by side.
    func prepareAll(_ updates: [DocumentUpdate]) async -> [Result<PreparedUpdate, StoreError>] {
        let prepareOne: @Sendable (DocumentUpdate) -> Result<PreparedUpdate, StoreError> = { update in
            Result { () throws(StoreError) in try self.prepare(update) }
        }
        if updates.count < Self.preparePiece && !updates.contains(where: Self.hasInlineData) {
            return updates.map(prepareOne)
        }
        return await BlockingPool.shared.map(updates, piece: Self.preparePiece, prepareOne)
    }

    /// Whether an update carries attachment content inline (`data`), which `prepare`
    /// stores as a blob. A body held as canonical bytes without `_` keys has none.
    static func hasInlineData(_ update: DocumentUpdate) -> Bool {
        if update.object.canonicalBytes != nil && !update.object.hasUnderscoreKey { return false }
        guard let entries = update.object["_attachments"]?.objectValue else { return false }
        return entries.values.contains { $0["data"] != nil }
    }

    enum PendingAttachment: Sendable {
        /// New in this revision (inline data stored now, or a blob stored beforehand):
        /// revpos becomes the new revision's generation.
        case new(contentType: String, digest: String, length: Int, stored: Bool)
        /// Unchanged since an earlier revision: taken from the parent, or trusted by digest.
        case stub(name: String, digest: String?, revpos: Int?, contentType: String?, length: Int?)
        /// Metadata with a digest whose blob must already be stored (replication).
        case known(AttachmentInfo)
    }

    func prepare(_ update: DocumentUpdate) throws(StoreError) -> PreparedUpdate {
        guard DocumentStore.isValidDocID(update.docID) else {
            throw .badRequest("Invalid doc ID")
        }
        if let bytes = update.object.canonicalBytes, !update.object.hasUnderscoreKey {
            // Arrived canonical (a replicated body): stored as is, never parsed here.
            return try prepareCanonical(update, bytes: bytes)
        }
        var properties = update.body
        for key in properties.keys where key.hasPrefix("_") && key != "_attachments" {
            throw .badRequest("user defined top level properties beginning with '_' are not allowed in document body: \(key)")
        }
        let attachmentsJSON = properties.removeValue(forKey: "_attachments")
        var attachments: [String: PendingAttachment] = [:]
        if let attachmentsJSON, !attachmentsJSON.isNull {
            guard let entries = attachmentsJSON.objectValue else { throw .badRequest("_attachments must be an object") }
            for (name, entry) in entries {
                attachments[name] = try prepareAttachment(name: name, entry: entry)
            }
        }
        if case .replicate(let history) = update.mode, history.isEmpty {
            throw .badRequest("Bad _revisions")
        }
        var prepared = PreparedUpdate(
            docID: update.docID, properties: ObjectBody(properties), attachments: attachments,
            deleted: update.deleted, mode: update.mode, noConflicts: update.noConflicts, version: update.version,
            versionText: update.versionText)
        if attachments.isEmpty {
            try setStoredForm(JSON.object(properties).canonicalBytes(), of: &prepared)
        }
        return prepared
    }

    /// The stored bytes of an update without attachments, and, for an edit, its
    /// revision ID: without attachments the stored form is exactly what the digest covers.
    private func setStoredForm(_ bytes: [UInt8], of prepared: inout PreparedUpdate) throws(StoreError) {
        if bytes.count > configuration.maxDocumentSize {
            throw StoreError(.tooLarge, reason: "Document exceeds the maximum size of \(configuration.maxDocumentSize) bytes")
        }
        prepared.encoded = bytes
        if case .edit(let parent) = prepared.mode {
            prepared.editRevision = RevID.compute(parent: parent, deleted: prepared.deleted, canonicalBody: bytes, using: CryptoSHA1.self)
        }
    }

    /// `prepare` for a body held as canonical bytes without `_` keys.
    private func prepareCanonical(_ update: DocumentUpdate, bytes: [UInt8]) throws(StoreError) -> PreparedUpdate {
        if case .replicate(let history) = update.mode, history.isEmpty {
            throw .badRequest("Bad _revisions")
        }
        var prepared = PreparedUpdate(
            docID: update.docID, properties: update.object, attachments: [:],
            deleted: update.deleted, mode: update.mode, noConflicts: update.noConflicts, version: update.version,
            versionText: update.versionText)
        try setStoredForm(bytes, of: &prepared)
        return prepared
    }

    private func prepareAttachment(name: String, entry: JSON) throws(StoreError) -> PendingAttachment {
        guard !name.isEmpty, entry.objectValue != nil else { throw .badRequest("Invalid attachment '\(name)'") }
        let contentType = entry["content_type"]?.stringValue ?? "application/octet-stream"
        if let data = entry["data"] {
            guard let text = data.stringValue, let bytes = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
                throw .badRequest("Invalid base64 data for attachment '\(name)'")
            }
            do {
                let stored = try blobs.storeHere([UInt8](bytes))
                return .new(contentType: contentType, digest: stored.digest, length: stored.length, stored: true)
            } catch let error as StoreError {
                throw error
            } catch {
                throw .storage(error)
            }
        }
        if entry["stub"]?.boolValue == true {
            return .stub(
                name: name, digest: entry["digest"]?.stringValue,
                revpos: entry["revpos"]?.intValue.map { Int($0) },
                contentType: entry["content_type"]?.stringValue, length: entry["length"]?.intValue.map { Int($0) })
        }
        if let info = AttachmentInfo(entry) {
            // Without a revpos the attachment is new in this revision.
            return entry["revpos"] == nil
                ? .new(contentType: info.contentType, digest: info.digest, length: info.length, stored: false)
                : .known(info)
        }
        throw .badRequest("Attachment '\(name)' has no data, stub or digest")
    }

    /// A document ID is non-empty UTF-8 without NUL, at most 250 bytes, and does not
    /// start with `_` (except the reserved `_design/` prefix).
    public static func isValidDocID(_ id: String) -> Bool {
        let count = id.utf8.count
        guard count > 0, count <= 250, !id.utf8.contains(0) else { return false }
        if id.hasPrefix("_") { return id.hasPrefix("_design/") && count > 8 }
        return true
    }
}
