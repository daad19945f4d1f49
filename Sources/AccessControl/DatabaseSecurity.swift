import DocumentModel
import DocumentStore
import Foundation
import Logging
import Synchronization

/// The security model of one database (ARCHITECTURE.md §6): its users and roles (kept
/// in the database's SQLite file), its sync function (installed as the store's
/// `RevisionGate`), authentication, and each user's effective access.
///
/// Users and roles from the config file are created or updated at start
/// (`bootstrap`); the admin REST API manages them afterwards. GUEST (unauthenticated
/// requests) exists only when configured, and is refused while disabled.
public final class DatabaseSecurity: Sendable {
    public let store: DocumentStore
    /// The sync function in effect (nil: Sync Gateway's default routing, native);
    /// `replaceSyncFunction` changes it (the admin config API).
    public var syncFunction: SyncFunction? { currentFunction.withLock { $0 } }
    private let currentFunction: Mutex<SyncFunction?>
    /// The mesh's shared secret (nil: any node that says it is a mesh peer is one).
    public let meshSecret: MeshSecret?
    /// Whether mesh links must use TLS (`"mesh": {"tls": true}`, the default with a secret).
    public let meshRequiresTLS: Bool
    /// Dial proofs already accepted (each is good once).
    let meshProofs = MeshProofLedger()
    /// PBKDF2 rounds for new password hashes.
    let passwordIterations: Int
    let logger: Logger
    /// Verified credentials: user name → (SHA-256 of the password, the hash it matched),
    /// so Basic authentication on every request does not run PBKDF2 every time.
    let verified = Mutex<[String: (digest: [UInt8], hash: String)]>([:])
    /// Users' computed access by name (`DatabaseSecurity+AccessCache.swift`).
    let accessCache = Mutex<[String: CachedAccess]>([:])
    /// The latest resync (`resyncStatus`).
    let resyncState = Mutex<ResyncStatus?>(nil)

    /// Installs `syncFunction` (nil: the default) as `store`'s gate.
    public init(
        store: DocumentStore, syncFunction: SyncFunction?, meshSecret: MeshSecret? = nil, meshRequiresTLS: Bool = false,
        passwordIterations: Int = PasswordHash.defaultIterations, logger: Logger = Logger(label: "Auth")
    ) {
        self.store = store
        self.meshSecret = meshSecret
        self.meshRequiresTLS = meshRequiresTLS && meshSecret != nil
        currentFunction = Mutex(syncFunction)
        self.passwordIterations = passwordIterations
        self.logger = logger
        store.setGate(SyncGate(function: syncFunction))
    }

    /// Installs `function` (nil: the default routing) as the store's gate for every
    /// revision written from now on. Stored channels and grants follow after `resync()`.
    public func replaceSyncFunction(_ function: SyncFunction?) {
        currentFunction.withLock { current in
            current = function
            store.setGate(SyncGate(function: function))
        }
    }

    /// Creates or updates the users and roles of the config (`"users"`, `"roles"` of a
    /// database, Sync Gateway's shape). A config password replaces the stored one only
    /// when it differs.
    public func bootstrap(users: [String: JSON], roles: [String: JSON]) async throws {
        for name in roles.keys.sorted() {
            do throws(PrincipalError) {
                try await putRole(name: name, json: roles[name]!)
            } catch {
                throw PrincipalError(reason: "role \"\(name)\" in the config: \(error.reason)")
            }
        }
        for name in users.keys.sorted() {
            var json = users[name]!
            if let password = json["password"]?.stringValue, let existing = try await user(named: name),
               let hash = existing.passwordHash, await verify(user: name, password: password, hash: hash),
               case .object(var object) = json
            {
                object.removeValue(forKey: "password")
                json = .object(object)
            }
            do throws(PrincipalError) {
                try await putUser(name: name, json: json)
            } catch {
                throw PrincipalError(reason: "user \"\(name)\" in the config: \(error.reason)")
            }
        }
    }

    /// Why a connection that says it comes from mesh node `nodeID` may not join, or nil
    /// when it may: always without a secret, else only over TLS when required, with a
    /// valid proof bound to `binding` (the SHA-256 of this listener's certificate when
    /// the connection uses TLS, nil for a plain one) that was not used before. With
    /// `consume: false` the proof is only checked (to explain a refusal).
    public func meshRefusal(nodeID: String, proof: String?, binding: [UInt8]?, consume: Bool = true) -> String? {
        guard let meshSecret else { return nil }
        guard meshSecret.verifyDial(proof, nodeID: nodeID, database: store.name, binding: binding) else {
            if let skew = meshSecret.dialSkew(proof, nodeID: nodeID, database: store.name, binding: binding) {
                return Self.meshClockSkew(skew)
            }
            return Self.meshSecretMissing
        }
        if meshRequiresTLS && binding == nil { return "This database's mesh links must use TLS (wss://)" }
        if consume, let proof, !meshProofs.firstUse(proof) { return "This mesh proof was already used" }
        return nil
    }

    /// The refusal of an authentic mesh proof made `skew` seconds away from this node's clock.
    public static func meshClockSkew(_ skew: TimeInterval) -> String {
        "The clocks of this node and the dialing node differ by \(Int(skew.rounded())) s; a mesh proof is accepted "
            + "within \(Int(MeshSecret.maxSkew)) s: set both clocks right (NTP)"
    }

    /// The refusal of a mesh link without a valid proof of the secret.
    public static let meshSecretMissing = "This database's mesh needs its shared secret"

    /// The accepting side's answer to a mesh dial proof (nil without a secret).
    public func meshAnswer(nodeID: String, dialProof: String?, binding: [UInt8]?) -> String? {
        guard let meshSecret, let dialProof else { return nil }
        return meshSecret.acceptProof(dialProof: dialProof, nodeID: nodeID, database: store.name, binding: binding)
    }

    // MARK: Principals as stored

    public func user(named name: String) async throws(PrincipalError) -> User? {
        try await stored(.user, name).flatMap { User(stored: $0.body) }
    }

    public func role(named name: String) async throws(PrincipalError) -> Role? {
        try await stored(.role, name).flatMap { Role(stored: $0.body) }
    }

    func stored(_ kind: DocumentStore.PrincipalKind, _ name: String) async throws(PrincipalError) -> StoredPrincipal? {
        do throws(StoreError) {
            return try await store.principal(kind, named: name)
        } catch {
            throw PrincipalError(error)
        }
    }

    // MARK: Effective access

    /// The user's roles and channels with the sequences they count from (from the cache
    /// while nothing changed, `DatabaseSecurity+AccessCache.swift`; a user changed
    /// since `user` was read is computed as given).
    public func access(for user: User) async throws(PrincipalError) -> UserAccess {
        if let entry = try await userAccess(named: user.name), entry.user == user { return entry.access }
        return try await access(for: user, stored: try await stored(.user, user.name))
    }

    /// The user and its stored form (whose `seqs` say since when it has each grant).
    func storedUser(named name: String) async throws(PrincipalError) -> (user: User, stored: StoredPrincipal)? {
        guard let stored = try await stored(.user, name), let user = User(stored: stored.body) else { return nil }
        return (user, stored)
    }

    /// `access(for:)` with the user's stored form already read.
    func access(for user: User, stored storedUser: StoredPrincipal?) async throws(PrincipalError) -> UserAccess {
        do throws(StoreError) {
            // A named collection has sequences of its own: its channels' starts are kept
            // under their own keys (`CollectionAccess.sequenceKey`), and admin roles count
            // there from 0 (their sequences are the default collection's).
            let collection = store.collection
            let userSeqs = Self.sequences(storedUser)
            let userSince = collection.isDefault ? storedUser?.sequence ?? 0 : 0
            func seqKey(_ channel: String) -> String {
                collection.isDefault ? channel : CollectionAccess.sequenceKey(collection, channel)
            }
            var roles: [String: UInt64] = [:]
            for role in user.adminRoles { roles[role] = collection.isDefault ? userSeqs["role:\(role)"] ?? userSince : 0 }
            for grant in try await store.roleGrants(to: user.name) {
                roles[grant.role] = min(roles[grant.role] ?? .max, grant.sequence)
            }
            // Roles are the database's (Sync Gateway 3): role() in another collection counts here
            // too, from sequence 0 (that collection's sequences do not order this one's).
            for role in try await store.roleGrantsInOtherCollections(to: user.name) where roles[role] == nil { roles[role] = 0 }
            var channels: [String: UInt64] = [ChannelSet.publicChannel: 0]
            func add(_ channel: String, _ seq: UInt64) { channels[channel] = min(channels[channel] ?? .max, seq) }
            let userChannels = collection.isDefault ? user.adminChannels : user.collectionAccess.adminChannels(in: collection)
            for channel in userChannels { add(channel, userSeqs[seqKey(channel)] ?? userSince) }
            var grantees = [user.name]
            var roleSince: [String: UInt64] = [:]
            for (name, since) in roles {
                guard let storedRole = try await store.principal(.role, named: name), let role = Role(stored: storedRole.body) else {
                    continue
                }
                let roleSeqs = Self.sequences(storedRole)
                let roleChannels = collection.isDefault ? role.adminChannels : role.collectionAccess.adminChannels(in: collection)
                let roleStored = collection.isDefault ? storedRole.sequence : 0
                for channel in roleChannels { add(channel, max(since, roleSeqs[seqKey(channel)] ?? roleStored)) }
                grantees.append("role:\(name)")
                roleSince["role:\(name)"] = since
            }
            for grant in try await store.channelGrants(to: grantees) {
                add(grant.channel, max(grant.sequence, roleSince[grant.grantee] ?? 0))
            }
            // Every role name granted counts (requireRole, `roles` of GET _user), as in
            // Sync Gateway; only a role that exists adds channels (above).
            return UserAccess(user: user, roles: roles, channels: channels)
        } catch {
            throw PrincipalError(error)
        }
    }

    /// Per-name sequences kept in a stored principal (`seqs`): when each admin channel
    /// (or `role:<name>` for admin roles) was first given.
    static func sequences(_ stored: StoredPrincipal?) -> [String: UInt64] {
        guard let object = stored?.body["seqs"]?.objectValue else { return [:] }
        return object.compactMapValues { $0.intValue.map { UInt64(max(0, $0)) } }
    }
}
