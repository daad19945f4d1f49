import DocumentStore

/// Inserts received revisions in batches: while one transaction commits, newly
/// arrived revisions queue up and go together in the next one (group commit).
/// Each caller gets its own result once its batch is durable.
actor RevisionInserter {
    private let store: DocumentStore
    private var pending: [(DocumentUpdate, CheckedContinuation<Result<WriteResult, StoreError>, Never>)] = []
    private var flushing = false
    private let maxBatch: Int
    /// The writer identity for the store's gate (nil: mesh or administrator).
    private let author: (any Sendable)?

    init(store: DocumentStore, author: (any Sendable)? = nil, maxBatch: Int = 500) {
        self.store = store
        self.author = author
        self.maxBatch = maxBatch
    }

    func insert(_ update: DocumentUpdate) async -> Result<WriteResult, StoreError> {
        await withCheckedContinuation { continuation in
            pending.append((update, continuation))
            if !flushing {
                flushing = true
                Task { await self.flushLoop() }
            }
        }
    }

    private func flushLoop() async {
        // Let revisions that are arriving right now join the first batch.
        await Task.yield()
        while !pending.isEmpty {
            let batch = Array(pending.prefix(maxBatch))
            pending.removeFirst(batch.count)
            let results: [Result<WriteResult, StoreError>]
            do {
                results = try await store.save(batch: batch.map(\.0), author: author)
            } catch {
                results = Array(repeating: .failure(error), count: batch.count)
            }
            for (item, result) in zip(batch, results) { item.1.resume(returning: result) }
        }
        flushing = false
    }
}
