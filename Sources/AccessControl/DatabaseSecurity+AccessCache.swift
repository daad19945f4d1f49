import DocumentStore
import Synchronization

/// Users' access as last computed, so that an authenticated request (Basic, session,
/// GUEST) does not read the user, its roles and its grants again each time: an entry
/// holds while the store's `accessGeneration` still reads what it read before the entry
/// was computed. Every commit that changes principals or grants, in any collection and
/// by any code path, moves the generation (`AccessGeneration`), so a change is seen by
/// the next request, as without the cache.
extension DatabaseSecurity {
    /// Entries kept at most; past it the cache starts again empty.
    static let accessCacheLimit = 10_000

    /// One user's stored form, parsed, and effective access.
    struct CachedAccess: Sendable {
        var generation: UInt64
        var user: User
        var stored: StoredPrincipal
        var access: UserAccess
    }

    /// The user named `name`, its stored form and its access (nil: no such user), from
    /// the cache when nothing changed since it was computed.
    func userAccess(named name: String) async throws(PrincipalError) -> CachedAccess? {
        // Read before computing: a change committed meanwhile leaves a stale entry
        // tagged with an older generation, which the next request computes again.
        let generation = store.accessGeneration
        if let hit = accessCache.withLock({ $0[name] }), hit.generation == generation { return hit }
        guard let (user, stored) = try await storedUser(named: name) else { return nil }
        let entry = CachedAccess(generation: generation, user: user, stored: stored, access: try await access(for: user, stored: stored))
        accessCache.withLock { cache in
            if cache.count >= Self.accessCacheLimit { cache.removeAll() }
            cache[name] = entry
        }
        return entry
    }
}
