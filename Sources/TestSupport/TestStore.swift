import Blocking
import DocumentModel
import DocumentStore
import Foundation

/// A `DocumentStore` in a temporary directory (or in memory) for tests. From async
/// code, `make` opens it and `destroy() async` closes it on the blocking pool.
public final class TestStore: Sendable {
    public let store: DocumentStore
    public let directory: TemporaryDirectory

    public init(
        inMemory: Bool = false, revsLimit: Int = 1000, maxDocumentSize: Int = 20 * 1024 * 1024,
        durability: StoreConfiguration.Durability = .normal, directory: TemporaryDirectory = TemporaryDirectory(),
        encryption: EncryptionKey? = nil
    ) throws {
        TestPoolLag.start()
        self.directory = directory
        store = try DocumentStore(configuration: StoreConfiguration(
            name: "db", location: inMemory ? .memory : .directory(directory.path), revsLimit: revsLimit,
            maxDocumentSize: maxDocumentSize, durability: durability, encryption: encryption))
    }

    /// `init` run on the blocking pool (opening a store creates files and fsyncs).
    public static func make(
        inMemory: Bool = false, revsLimit: Int = 1000, maxDocumentSize: Int = 20 * 1024 * 1024,
        durability: StoreConfiguration.Durability = .normal, directory: TemporaryDirectory = TemporaryDirectory(),
        encryption: EncryptionKey? = nil
    ) async throws -> TestStore {
        try await BlockingPool.shared.perform { () throws in
            try TestStore(
                inMemory: inMemory, revsLimit: revsLimit, maxDocumentSize: maxDocumentSize, durability: durability,
                directory: directory, encryption: encryption)
        }
    }

    /// Closes the store and removes its files.
    public func destroy() {
        store.close()
        directory.remove()
    }

    /// `destroy()` for async code: closing and removing run on the blocking pool.
    public func destroy() async {
        await store.close()
        let directory = directory
        await BlockingPool.shared.perform { directory.remove() }
    }
}

extension DocumentStore {
    /// Test shorthand: a normal edit of `id` on top of `parent`.
    @discardableResult
    public func put(_ id: String, _ body: [String: JSON], parent: RevID? = nil, deleted: Bool = false) async throws -> WriteResult {
        try await save(DocumentUpdate(docID: id, body: body, deleted: deleted, mode: .edit(parent: parent)))
    }

    /// Test shorthand: a replicated revision with its history (newest first).
    @discardableResult
    public func replicate(_ id: String, _ body: [String: JSON], history: [String], deleted: Bool = false) async throws -> WriteResult {
        try await save(DocumentUpdate(
            docID: id, body: body, deleted: deleted, mode: .replicate(history: history.map { RevID($0)! })))
    }
}
