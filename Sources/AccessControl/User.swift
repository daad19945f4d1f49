import DocumentModel

/// A user: its name, password hash, the channels and roles an administrator gave it,
/// and whether it may log in.
///
/// `User` owns the user's JSON in Sync Gateway's shape. Input (PUT/POST body, config
/// entry): `name`, `password`, `admin_channels`, `admin_roles`, `disabled`, `email`.
/// Output (GET): the same without the password, plus `all_channels` and `roles` (filled
/// in by `DatabaseSecurity`, which knows the grants). The stored form keeps the password
/// only as `PasswordHash`.
public struct User: Sendable, Equatable {
    /// The name of the user that stands for unauthenticated requests.
    public static let guestName = "GUEST"

    public var name: String
    public var passwordHash: PasswordHash?
    public var adminChannels: Set<String>
    public var adminRoles: Set<String>
    public var disabled: Bool
    public var email: String?
    /// Admin channels in named collections (`collection_access`).
    public var collectionAccess = CollectionAccess()

    public init(name: String, passwordHash: PasswordHash? = nil, adminChannels: Set<String> = [], adminRoles: Set<String> = [], disabled: Bool = false, email: String? = nil) {
        self.name = name
        self.passwordHash = passwordHash
        self.adminChannels = adminChannels
        self.adminRoles = adminRoles
        self.disabled = disabled
        self.email = email
    }

    public var isGuest: Bool { name == Self.guestName }

    static let inputKeys: Set<String> = ["name", "password", "admin_channels", "admin_roles", "disabled", "email", "all_channels", "roles", "collection_access"]

    /// A new user from a PUT/POST body or a config entry; `name` (URL or config key)
    /// must match a `name` in the body. A user other than GUEST needs a password.
    public init(json: JSON, name: String? = nil, passwordIterations: Int = PasswordHash.defaultIterations) throws(PrincipalError) {
        guard case .object(let body) = json else { throw PrincipalError(reason: "User definition must be a JSON object") }
        let resolved = try PrincipalValidation.resolveName(body, name, kind: "user")
        self.init(name: resolved)
        try apply(body, passwordIterations: passwordIterations)
        if passwordHash == nil && !isGuest {
            throw PrincipalError(reason: "Missing password for user \"\(resolved)\"")
        }
    }

    /// Applies a PUT on an existing user: the fields present change, the others stay
    /// (a PUT that sets only `admin_roles` keeps the password).
    public func updated(with json: JSON, passwordIterations: Int = PasswordHash.defaultIterations) throws(PrincipalError) -> User {
        guard case .object(let body) = json else { throw PrincipalError(reason: "User definition must be a JSON object") }
        _ = try PrincipalValidation.resolveName(body, name, kind: "user")
        var copy = self
        try copy.apply(body, passwordIterations: passwordIterations)
        return copy
    }

    private mutating func apply(_ body: [String: JSON], passwordIterations: Int) throws(PrincipalError) {
        for key in body.keys where !Self.inputKeys.contains(key) {
            throw PrincipalError(reason: "Unknown field \"\(key)\" in user definition")
        }
        if let password = body["password"] {
            switch password {
            case .string(let text) where !text.isEmpty:
                passwordHash = PasswordHash(password: text, iterations: passwordIterations)
            case .null:
                passwordHash = nil
            default:
                throw PrincipalError(reason: "Invalid password: must be a non-empty string")
            }
        }
        if let channels = body["admin_channels"] {
            let set = try PrincipalValidation.stringSet(channels, field: "admin_channels")
            try PrincipalValidation.validateChannels(set, field: "admin_channels")
            adminChannels = set
        }
        if let roles = body["admin_roles"] {
            let set = try PrincipalValidation.stringSet(roles, field: "admin_roles")
            for role in set { try PrincipalValidation.validateName(role, kind: "role") }
            adminRoles = set
        }
        if let access = body["collection_access"] {
            collectionAccess = try CollectionAccess.parse(access, merging: collectionAccess)
        }
        if let value = body["disabled"] {
            guard case .bool(let flag) = value else { throw PrincipalError(reason: "Invalid disabled: must be true or false") }
            disabled = flag
        }
        if let value = body["email"] {
            switch value {
            case .string(let text): email = text.isEmpty ? nil : text
            case .null: email = nil
            default: throw PrincipalError(reason: "Invalid email: must be a string")
            }
        }
    }

    /// The stored form (with the password hash): never sent to clients.
    public var storedJSON: JSON {
        var object: [String: JSON] = [
            "name": .string(name),
            "admin_channels": PrincipalValidation.sortedArray(adminChannels),
            "admin_roles": PrincipalValidation.sortedArray(adminRoles),
            "disabled": .bool(disabled),
        ]
        if let passwordHash { object["password_hash"] = .string(passwordHash.encoded) }
        if let email { object["email"] = .string(email) }
        if let access = collectionAccess.json() { object["collection_access"] = access }
        return .object(object)
    }

    /// Reads the stored form (nil when it is not one).
    public init?(stored json: JSON) {
        guard let name = json["name"]?.stringValue else { return nil }
        self.init(name: name)
        passwordHash = json["password_hash"]?.stringValue.flatMap(PasswordHash.init(encoded:))
        adminChannels = Set(json["admin_channels"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        adminRoles = Set(json["admin_roles"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        disabled = json["disabled"]?.boolValue ?? false
        email = json["email"]?.stringValue
        collectionAccess = CollectionAccess(stored: json["collection_access"])
    }

    /// Sync Gateway's GET `/{db}/_user/{name}` body, given the user's effective channels
    /// and roles (never the password or its hash).
    public func publicJSON(allChannels: Set<String>, roles: Set<String>) -> JSON {
        var object: [String: JSON] = [
            "name": .string(name),
            "admin_channels": PrincipalValidation.sortedArray(adminChannels),
            "all_channels": PrincipalValidation.sortedArray(allChannels),
            "admin_roles": PrincipalValidation.sortedArray(adminRoles),
            "roles": PrincipalValidation.sortedArray(roles),
        ]
        if disabled { object["disabled"] = true }
        if let email { object["email"] = .string(email) }
        if let access = collectionAccess.json() { object["collection_access"] = access }
        return .object(object)
    }
}
