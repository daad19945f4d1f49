import DocumentStore

/// How a collection's indexes are told apart in the database's query tables.
///
/// `view_*` and `mango_*` are one set of tables per SQLite file; an index row is found by
/// its signature (SHA-1 hex of its definition). A named collection's indexes store their
/// signature prefixed with the collection (`scope.name:`), the default collection's
/// without a prefix (a hex signature never holds `:`), so the same view in two
/// collections is two indexes, and each collection's cleanup drops only its own.
enum IndexNamespace {
    /// The prefix of `store`'s indexes ("" for the default collection).
    static func of(_ store: DocumentStore) -> String {
        store.collection.isDefault ? "" : "\(store.collection):"
    }

    /// Whether the stored signature `stored` belongs to `namespace`.
    static func owns(_ stored: String, namespace: String) -> Bool {
        namespace.isEmpty ? !stored.contains(":") : stored.hasPrefix(namespace)
    }
}
