import Blocking
import DocumentModel
import DocumentStore

/// The admin REST API's principal operations (`/{db}/_user/…`, `/{db}/_role/…`).
extension DatabaseSecurity {
    /// Creates the user, or updates the fields the body names (PUT). Returns true when
    /// it was created.
    @discardableResult
    public func putUser(name: String, json: JSON) async throws(PrincipalError) -> Bool {
        let existing = try await stored(.user, name)
        let iterations = passwordIterations
        // A password in the body is hashed (PBKDF2, tens of milliseconds): on the blocking pool.
        let user = try await BlockingPool.shared.perform { () throws(PrincipalError) -> User in
            if let existing, let current = User(stored: existing.body) {
                return try current.updated(with: json, passwordIterations: iterations)
            }
            return try User(json: json, name: name, passwordIterations: iterations)
        }
        var keys = user.adminChannels.union(user.collectionAccess.sequenceKeys)
        for role in user.adminRoles { keys.insert("role:\(role)") }
        try await save(.user, name: name, body: user.storedJSON, keys: keys, previous: existing)
        verified.withLock { _ = $0.removeValue(forKey: name) }
        return existing == nil
    }

    /// Creates the role, or updates the fields the body names. Returns true when created.
    @discardableResult
    public func putRole(name: String, json: JSON) async throws(PrincipalError) -> Bool {
        let existing = try await stored(.role, name)
        let role: Role
        if let existing, let current = Role(stored: existing.body) {
            role = try current.updated(with: json)
        } else {
            role = try Role(json: json, name: name)
        }
        try await save(
            .role, name: name, body: role.storedJSON, keys: role.adminChannels.union(role.collectionAccess.sequenceKeys),
            previous: existing)
        return existing == nil
    }

    /// Saves a principal with `seqs`: the sequence from which each of `keys` counts
    /// (kept for keys it already had, the next sequence for new ones). Keys it had and
    /// lost are recorded as revocations (a user's `role:<name>` keys as roles). Channels of
    /// named collections (`collection_access`) count from their collection's next sequence.
    private func save(_ kind: DocumentStore.PrincipalKind, name: String, body: JSON, keys: Set<String>, previous: StoredPrincipal?) async throws(PrincipalError) {
        let old = Self.sequences(previous)
        let grantee = kind == .user ? name : "role:\(name)"
        let lost = old.keys.filter { !keys.contains($0) && CollectionAccess.collection(ofSequenceKey: $0) == nil }
        let revoked = lost.sorted().map { key in
            kind == .user && key.hasPrefix("role:")
                ? Revocation(grantee: grantee, kind: .role, name: String(key.dropFirst("role:".count)))
                : Revocation(grantee: grantee, kind: .channel, name: key)
        }
        let next = store.lastSequence + 1
        var seqs: [String: JSON] = [:]
        for key in keys {
            var start = next
            if let collection = CollectionAccess.collection(ofSequenceKey: key) {
                start = (store.lastSequence(of: collection) ?? 0) + 1
            }
            seqs[key] = .int(Int64(clamping: old[key] ?? start))
        }
        guard case .object(var object) = body else { return }
        object["seqs"] = .object(seqs)
        // Channels of named collections it lost are recorded in their collections (after
        // the principal is saved: a reader sees the loss once the grant is gone).
        var lostInCollections: [CollectionName: [Revocation]] = [:]
        for key in old.keys where !keys.contains(key) {
            guard let (collection, channel) = CollectionAccess.channel(ofSequenceKey: key) else { continue }
            lostInCollections[collection, default: []].append(Revocation(grantee: grantee, kind: .channel, name: channel))
        }
        do throws(StoreError) {
            try await store.savePrincipal(kind, name: name, body: .object(object), revoked: revoked)
            for (collection, revocations) in lostInCollections.sorted(by: { $0.key < $1.key }) {
                guard let target = try? store.databaseStore.collection(collection) else { continue }
                try await target.recordRevocations(revocations.sorted { $0.name < $1.name })
            }
        } catch {
            throw PrincipalError(error)
        }
    }

    public func deleteUser(name: String) async throws(PrincipalError) {
        try await delete(.user, name)
        verified.withLock { _ = $0.removeValue(forKey: name) }
    }

    /// Deletes a role; its holders lose its admin channels (recorded as revocations).
    public func deleteRole(name: String) async throws(PrincipalError) {
        let channels = try await role(named: name)?.adminChannels ?? []
        try await delete(.role, name, revoked: channels.sorted().map { Revocation(grantee: "role:\(name)", kind: .channel, name: $0) })
    }

    private func delete(_ kind: DocumentStore.PrincipalKind, _ name: String, revoked: [Revocation] = []) async throws(PrincipalError) {
        let deleted: Bool
        do throws(StoreError) {
            deleted = try await store.deletePrincipal(kind, name: name, revoked: revoked)
        } catch {
            throw PrincipalError(error)
        }
        if !deleted { throw PrincipalError(status: 404, reason: "missing") }
    }

    /// GET `/{db}/_user/{name}`: never the password or its hash.
    public func userJSON(name: String) async throws(PrincipalError) -> JSON {
        guard let user = try await user(named: name) else { throw PrincipalError(status: 404, reason: "missing") }
        let access = try await access(for: user)
        var channels = Set(access.channels.keys)
        channels.remove(ChannelSet.publicChannel)
        return user.publicJSON(allChannels: channels, roles: Set(access.roles.keys))
    }

    /// GET `/{db}/_role/{name}`.
    public func roleJSON(name: String) async throws(PrincipalError) -> JSON {
        guard let role = try await role(named: name) else { throw PrincipalError(status: 404, reason: "missing") }
        return role.publicJSON(allChannels: try await channels(of: role))
    }

    /// The channels a role gives: its admin channels and those documents grant it.
    func channels(of role: Role) async throws(PrincipalError) -> Set<String> {
        do throws(StoreError) {
            return role.adminChannels.union(try await store.channelGrants(to: ["role:\(role.name)"]).map(\.channel))
        } catch {
            throw PrincipalError(error)
        }
    }

    /// GET `/{db}/_user/` or `/{db}/_role/`: the names, sorted.
    public func names(_ kind: DocumentStore.PrincipalKind) async throws(PrincipalError) -> [String] {
        do throws(StoreError) {
            return try await store.principals(kind).map(\.name)
        } catch {
            throw PrincipalError(error)
        }
    }
}
