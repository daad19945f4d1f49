import DocumentStore
import Synchronization

/// One value per store for the life of the process, found by the store's identity: what
/// every connection of a database shares (`RevisionClaims`, `MeshKnowledge`). Stores are
/// held weakly; the entries of stores gone are dropped when a new store is registered.
final class StoreRegistry<Value: Sendable>: Sendable {
    private final class Entry: Sendable {
        weak let store: DocumentStore?
        let value: Value
        init(_ store: DocumentStore, _ value: Value) {
            self.store = store
            self.value = value
        }
    }

    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])
    private let make: @Sendable () -> Value

    init(_ make: @escaping @Sendable () -> Value) {
        self.make = make
    }

    /// The value of `store`, made on first use.
    func value(for store: DocumentStore) -> Value {
        entries.withLock { entries in
            let key = ObjectIdentifier(store)
            if let entry = entries[key], entry.store === store { return entry.value }
            entries = entries.filter { $0.value.store != nil }
            let entry = Entry(store, make())
            entries[key] = entry
            return entry.value
        }
    }
}
