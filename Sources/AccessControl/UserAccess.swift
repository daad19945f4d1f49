import DocumentModel

/// What one user may read right now: its roles and channels, each with the sequence
/// from which it counts (a changes feed since an earlier sequence backfills that
/// channel). Computed by `DatabaseSecurity` from the user, its roles and the grants of
/// documents' current revisions.
public struct UserAccess: Sendable, Equatable {
    public let user: User
    /// Role name → sequence from which the user has it: every role name granted
    /// (`admin_roles`, `role()`), whether or not a role document exists (Sync Gateway's
    /// rule; only an existing role adds channels).
    public let roles: [String: UInt64]
    /// Channel name → sequence from which the user can read it. Always holds the
    /// public channel `!`.
    public let channels: [String: UInt64]

    public init(user: User, roles: [String: UInt64], channels: [String: UInt64]) {
        self.user = user
        self.roles = roles
        self.channels = channels
    }

    /// The user holds the star channel: every document is visible.
    public var seesEverything: Bool { channels[ChannelSet.all] != nil }

    /// Whether a document in `documentChannels` is visible to the user.
    public func canRead(_ documentChannels: Set<String>) -> Bool {
        seesEverything || documentChannels.contains { channels[$0] != nil }
    }

    /// The identity the sync function checks `require…` against.
    public var syncUser: SyncUser {
        SyncUser(name: user.name, roles: Set(roles.keys), channels: Set(channels.keys))
    }
}

/// Who makes a request.
public enum Principal: Sendable, Equatable {
    /// The admin port, or a mesh peer: sees and may write everything (the sync
    /// function still validates, with every `require…` passing).
    case admin
    /// A user authenticated on the public port (or GUEST).
    case user(UserAccess)

    /// The writer identity to hand to `DocumentStore.save(…author:)`.
    public var author: SyncUser? {
        if case .user(let access) = self { return access.syncUser }
        return nil
    }

    /// The user's access, nil for an administrator.
    public var access: UserAccess? {
        if case .user(let access) = self { return access }
        return nil
    }
}
