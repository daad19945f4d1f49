import DocumentModel
import DocumentStore
import Foundation
import Logging
import Synchronization

/// Mango (`_find`) for one database: its `json` indexes (kept as `"language": "query"`
/// design documents, indexed into Query's `mango_*` tables incrementally from the
/// changes feed), query planning and execution, `_explain`.
public final class MangoEngine: Sendable {
    public let store: DocumentStore
    let logger: Logger
    private let tablesReady = Mutex(false)
    /// Documents read per step of an index update or a scan.
    static let batch = 1_000

    public init(store: DocumentStore, logger: Logger = Logger(label: "Query")) {
        self.store = store
        self.logger = logger
    }

    /// What a `_find` returns (before rendering and projection by the REST layer).
    public struct Result: Sendable {
        public var documents: [DocumentListing]
        public var bookmark: String
        public var warning: String?
        public var keysExamined = 0
        public var docsExamined = 0
    }

    // MARK: Indexes

    /// Every Mango index of the database (from its design documents), by design document and name.
    public func indexes() async throws(StoreError) -> [MangoIndexDefinition] {
        var query = AllDocsQuery()
        query.startKey = "_design/"
        query.endKey = "_design0"
        query.inclusiveEnd = false
        query.includeBodies = true
        return try await store.allDocs(query).flatMap { listing in
            MangoIndexDefinition.all(inDesignDocument: listing.docID, body: listing.body ?? [:])
        }
    }

    /// Creates the index (adding it to its design document); false if an identical one exists.
    public func create(_ index: MangoIndexDefinition) async throws(StoreError) -> Bool {
        var body: [String: JSON] = ["language": "query", "views": [:]]
        var parent: RevID?
        if let existing = try await store.documents([index.ddoc], includeBodies: true).first ?? nil, !existing.deleted {
            body = existing.body ?? body
            parent = existing.winner
            guard body["language"]?.stringValue == "query" else {
                throw StoreError(.badRequest, reason: "\(index.ddoc) is a design document of views, not of Mango indexes")
            }
        }
        var views = body["views"]?.objectValue ?? [:]
        if views[index.name] == index.viewJSON { return false }
        views[index.name] = index.viewJSON
        body["views"] = .object(views)
        _ = try await store.save(DocumentUpdate(docID: index.ddoc, body: body, mode: .edit(parent: parent)))
        return true
    }

    /// Deletes the index `name` of design document `ddoc` (the design document too when
    /// it was its last). False when there is no such index.
    public func delete(ddoc: String, name: String) async throws(StoreError) -> Bool {
        guard let existing = try await store.documents([ddoc], includeBodies: true).first ?? nil, !existing.deleted,
              var body = existing.body, body["language"]?.stringValue == "query",
              var views = body["views"]?.objectValue, views.removeValue(forKey: name) != nil
        else { return false }
        if views.isEmpty {
            _ = try await store.save(DocumentUpdate(docID: ddoc, body: [:], deleted: true, mode: .edit(parent: existing.winner)))
        } else {
            body["views"] = .object(views)
            _ = try await store.save(DocumentUpdate(docID: ddoc, body: body, mode: .edit(parent: existing.winner)))
        }
        return true
    }

    /// Brings `index` up to the latest committed change; returns its table ID.
    @discardableResult
    func update(_ index: MangoIndexDefinition) async throws(StoreError) -> Int64 {
        try await ensureTables()
        let signature = IndexNamespace.of(store) + index.signature
        let filter: MangoSelector? = index.partialFilter.flatMap { try? MangoSelector($0) }
        while true {
            let state = try await store.auxiliaryWrite { db in try MangoStorage.open(db, signature: signature) }
            let changes = try await store.changes(since: state.seq, limit: Self.batch, includeBodies: true)
            guard let last = changes.last?.sequence else { return state.id }
            let docs = changes.map { listing -> (id: String, key: [UInt8]?) in
                (listing.docID, Self.key(of: listing, fields: index.fields, filter: filter))
            }
            let applied = try await store.auxiliaryWrite { db in
                try MangoStorage.apply(db, index: state.id, from: state.seq, to: last, docs: docs)
            }
            if !applied { continue }  // another update moved it; start from where it is
        }
    }

    /// The sort key of a document in an index: the array of its field values, nil when a
    /// field is missing, it is deleted or a design document, or the partial filter rejects it.
    static func key(of listing: DocumentListing, fields: [MangoField], filter: MangoSelector?) -> [UInt8]? {
        guard !listing.deleted, !listing.docID.hasPrefix("_design/"), let body = listing.body else { return nil }
        let document = Self.document(listing, body: body)
        var values: [JSON] = []
        for field in fields {
            guard let value = field.value(in: document) else { return nil }
            values.append(value)
        }
        if let filter, !filter.matches(document) { return nil }
        return ViewCollation.sortKey(.array(values))
    }

    static func document(_ listing: DocumentListing, body: [String: JSON]) -> JSON {
        var object = body
        object["_id"] = .string(listing.docID)
        object["_rev"] = .string(listing.winner.description)
        return .object(object)
    }

    /// Drops index tables that no design document defines any more (`_view_cleanup`).
    public func cleanup() async throws(StoreError) -> Int {
        try await ensureTables()
        let namespace = IndexNamespace.of(store)
        let keep = Set(try await indexes().map { namespace + $0.signature })
        return try await store.auxiliaryWrite { db in try MangoStorage.dropUnused(db, keep: keep, namespace: namespace) }
    }

    /// The table ID of `index`, without updating it.
    func indexID(_ index: MangoIndexDefinition) async throws(StoreError) -> Int64 {
        try await ensureTables()
        let signature = IndexNamespace.of(store) + index.signature
        return try await store.auxiliaryWrite { db in try MangoStorage.open(db, signature: signature).id }
    }

    /// Creates the `mango_*` tables unless they exist (checked with a read first, so a
    /// query does not take the writer for nothing).
    func ensureTables() async throws(StoreError) {
        if tablesReady.withLock({ $0 }) { return }
        let exists = try await store.auxiliaryRead { db in try db.tableExists("mango_rows") }
        if !exists { try await store.auxiliaryWrite { db in try MangoStorage.createTables(db) } }
        tablesReady.withLock { $0 = true }
    }
}
