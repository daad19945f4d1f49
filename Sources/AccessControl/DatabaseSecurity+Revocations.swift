import DocumentModel
import DocumentStore

/// Which channels a user lost after a point of its feed: what a reconnecting pull is
/// told it can no longer read (Sync Gateway 3's revocation), from the revocations the
/// store records when grants, admin channels and roles are taken away.
extension DatabaseSecurity {
    /// The channels `user` could read at some point after `since` and cannot read now
    /// (`access` is its current access): channels taken from the user or from a role it
    /// holds, and the channels of roles it lost.
    public func lostChannels(of user: User, access: UserAccess, since: UInt64) async throws(PrincipalError) -> Set<String> {
        var lost = Set<String>()
        var lostRoles = Set<String>()
        for revocation in try await revocations(of: [user.name] + access.roles.keys.map { "role:\($0)" }, since: since) {
            switch revocation.kind {
            case .channel: lost.insert(revocation.name)
            case .role: lostRoles.insert(revocation.name)
            }
        }
        for name in lostRoles where access.roles[name] == nil {
            // What the role gives now, and what it lost meanwhile.
            lost.formUnion(try await channels(of: try await role(named: name) ?? Role(name: name)))
            lost.formUnion(try await revocations(of: ["role:\(name)"], since: since).filter { $0.kind == .channel }.map(\.name))
        }
        return lost.subtracting(access.channels.keys)
    }

    private func revocations(of grantees: [String], since: UInt64) async throws(PrincipalError) -> [Revocation] {
        do throws(StoreError) {
            return try await store.revocations(of: grantees, since: since)
        } catch {
            throw PrincipalError(error)
        }
    }
}
