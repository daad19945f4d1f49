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
        do throws(StoreError) {
            let held = access.roles.keys.map { "role:\($0)" }
            var lost = Set<String>()
            var lostRoles = Set<String>()
            for revocation in try await store.revocations(of: [user.name] + held, since: since) {
                switch revocation.kind {
                case .channel: lost.insert(revocation.name)
                case .role: lostRoles.insert(revocation.name)
                }
            }
            for role in lostRoles where access.roles[role] == nil {
                // What the role gives now, and what it lost meanwhile.
                if let stored = try await store.principal(.role, named: role), let definition = Role(stored: stored.body) {
                    lost.formUnion(definition.adminChannels)
                }
                lost.formUnion(try await store.channelGrants(to: ["role:\(role)"]).map(\.channel))
                lost.formUnion(try await store.revocations(of: ["role:\(role)"], since: since).filter { $0.kind == .channel }.map(\.name))
            }
            return lost.subtracting(access.channels.keys)
        } catch {
            throw PrincipalError(status: error.httpStatus, reason: error.reason)
        }
    }
}
