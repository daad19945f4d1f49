import DocumentModel
import DocumentStore
import Foundation

/// A `DocumentStore` in a temporary directory (or in memory) for tests.
public final class TestStore: Sendable {
    public let store: DocumentStore
    public let directory: TemporaryDirectory

    public init(
        inMemory: Bool = false, revsLimit: Int = 1000, maxDocumentSize: Int = 20 * 1024 * 1024,
        durability: StoreConfiguration.Durability = .normal, directory: TemporaryDirectory = TemporaryDirectory(),
        encryption: EncryptionKey? = nil
    ) throws {
        self.directory = directory
        store = try DocumentStore(configuration: StoreConfiguration(
            name: "db", location: inMemory ? .memory : .directory(directory.path), revsLimit: revsLimit,
            maxDocumentSize: maxDocumentSize, durability: durability, encryption: encryption))
    }

    /// Closes the store and removes its files.
    public func destroy() {
        store.close()
        directory.remove()
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
