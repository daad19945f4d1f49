import Blocking
import DocumentModel
import DocumentStore
import Foundation
import GRDB
import Logging

/// The views of one database: design documents, their persistent indexes, and queries.
///
/// `ViewEngine` owns the indexes of a database (one `ViewIndex` per view signature,
/// created on first use and kept while the engine lives), the background task that brings
/// them up to date after commits, `_view_cleanup`, and running view queries
/// (`ViewEngine+Rows`, `ViewEngine+Reduce`). It reads documents only through
/// `DocumentStore`'s API, and its own `view_*` tables through `auxiliaryRead/Write`.
public actor ViewEngine {
    /// Tuning of an engine.
    public struct Options: Sendable {
        /// The budget of one map or reduce call; a function that overruns it fails its index.
        public var timeout: Duration
        /// Documents mapped per batch (per write transaction).
        public var batchSize: Int
        /// Bring known indexes up to date in the background after every commit.
        public var updatesInBackground: Bool

        public init(timeout: Duration = .seconds(2), batchSize: Int = 2_000, updatesInBackground: Bool = true) {
            self.timeout = timeout
            self.batchSize = batchSize
            self.updatesInBackground = updatesInBackground
        }
    }

    public nonisolated let store: DocumentStore
    public nonisolated let options: Options
    nonisolated let logger: Logger
    private var indexes: [String: ViewIndex] = [:]
    private var opening: [String: Task<ViewIndex, any Error>] = [:]
    private var background: Task<Void, Never>?
    private var tablesReady = false

    public init(store: DocumentStore, options: Options = Options(), logger: Logger = Logger(label: "Query")) {
        self.store = store
        self.options = options
        self.logger = logger
    }

    /// Stops the background updates.
    public func close() {
        background?.cancel()
        background = nil
    }

    /// A stored design document (`_design/{name}`); 404 when missing or deleted.
    public func designDocument(named name: String) async throws(ViewError) -> DesignDocument {
        let id = DesignDocument.prefix + name
        do {
            let (_, revision) = try await store.revision(id)
            return try DesignDocument(id: id, body: revision.body ?? [:])
        } catch let error as StoreError {
            if error.httpStatus == 404 { throw .missingDesign(error.reason) }
            throw .storage(error)
        } catch let error as ViewError {
            throw error
        } catch {
            throw .functionFailed("\(error)")
        }
    }

    /// The index of `view` in design document `design` (opened, not updated).
    public func index(design: String, view: String) async throws(ViewError) -> ViewIndex {
        let document = try await designDocument(named: design)
        guard let definition = document.views[view] else { throw .missingView(view) }
        return try await index(for: definition, viewName: view)
    }

    /// The index of a view definition, opened once per signature.
    public func index(for definition: ViewDefinition, viewName: String) async throws(ViewError) -> ViewIndex {
        let signature = definition.signature
        if let index = indexes[signature] { return index }
        let task: Task<ViewIndex, any Error>
        if let pending = opening[signature] {
            task = pending
        } else {
            let store = store, options = options, logger = logger
            try await createTables()
            task = Task {
                // Compiling the map and reduce functions blocks: on the blocking pool.
                let functions = try await BlockingPool.shared.perform { () throws in
                    try ViewFunctions(definition, viewName: viewName, timeout: options.timeout, logger: logger)
                }
                return try await ViewIndex(
                    store: store, definition: definition, functions: functions, logger: logger, batchSize: options.batchSize)
            }
            opening[signature] = task
        }
        let result = await task.result
        opening[signature] = nil
        switch result {
        case .success(let index):
            indexes[signature] = index
            startBackground()
            return index
        case .failure(let error as ViewError):
            throw error
        case .failure(let error):
            throw .functionFailed("\(error)")
        }
    }

    /// `_view_cleanup`: drops the indexes that no live design document's view uses.
    /// Returns the dropped signatures.
    @discardableResult
    public func cleanup() async throws(ViewError) -> [String] {
        try await createTables()
        var keep = Set<String>()
        for id in try await designDocumentIDs() {
            guard let document = try? await designDocument(named: String(id.dropFirst(DesignDocument.prefix.count))) else {
                continue
            }
            for definition in document.views.values { keep.insert(definition.signature) }
        }
        let namespace = IndexNamespace.of(store)
        let kept = Set(keep.map { namespace + $0 })
        let dropped: [String]
        do {
            dropped = try await store.auxiliaryWrite { db in try ViewStorage.dropIndexes(db, keeping: kept, namespace: namespace) }
                .map { String($0.dropFirst(namespace.count)) }
        } catch {
            throw .storage(error)
        }
        for signature in dropped { indexes[signature] = nil }
        return dropped
    }

    /// The IDs of the live design documents, in ID order.
    public func designDocumentIDs() async throws(ViewError) -> [String] {
        var query = AllDocsQuery()
        query.startKey = "_design/"
        query.endKey = "_design0"
        query.inclusiveEnd = false
        do {
            return try await store.allDocs(query).map(\.docID)
        } catch {
            throw .storage(error)
        }
    }

    private func createTables() async throws(ViewError) {
        guard !tablesReady else { return }
        do {
            try await store.auxiliaryWrite { db in try ViewStorage.createTables(db) }
        } catch {
            throw .storage(error)
        }
        tablesReady = true
    }

    private func startBackground() {
        guard options.updatesInBackground, background == nil else { return }
        let updates = store.sequenceUpdates()
        background = Task { [weak self] in
            for await sequence in updates {
                guard let self, !Task.isCancelled else { return }
                for index in await self.openIndexes() {
                    try? await index.update(to: sequence)
                }
            }
        }
    }

    private func openIndexes() -> [ViewIndex] { Array(indexes.values) }
}
