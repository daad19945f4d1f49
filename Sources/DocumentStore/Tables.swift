#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The SQLite table names of the collection whose transaction runs on the current
/// thread. The default collection keeps the unprefixed tables of the original schema
/// (`docs`, `revs`, …); a named collection with number `n` in the `collections` table
/// has the same tables prefixed `c<n>_` in the same file (docs/storage.md).
///
/// Every store read or write runs its closure inside `with(_:_:)` on the connection's
/// thread, so the SQL text of the store's many static helpers names the right tables
/// without each of them being handed the collection.
enum Tables {
    /// A thread-specific slot holding the current collection number (absent: 0, the
    /// default collection).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The collection number of the running transaction (0: the default collection).
    static var current: Int {
        Int(bitPattern: pthread_getspecific(key))
    }

    /// Runs `body` with `collection`'s tables as the current ones.
    static func with<T>(_ collection: Int, _ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: collection))
        defer { pthread_setspecific(key, previous) }
        return try body()
    }

    /// The table prefix of collection `number` (empty for the default collection).
    static func prefix(_ number: Int) -> String { number == 0 ? "" : "c\(number)_" }

    static func name(_ table: String) -> String {
        let number = current
        return number == 0 ? table : prefix(number) + table
    }

    static var docs: String { name("docs") }
    static var revs: String { name("revs") }
    static var localDocs: String { name("local_docs") }
    static var meta: String { name("meta") }
    static var info: String { name("info") }
    static var revAccess: String { name("rev_access") }
    static var docChannels: String { name("doc_channels") }
    static var accessGrants: String { name("access_grants") }
    static var roleGrants: String { name("role_grants") }
    static var revocations: String { name("revocations") }
    static var revOrigins: String { name("rev_origins") }
}
