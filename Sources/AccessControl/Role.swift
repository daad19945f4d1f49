import DocumentModel

/// A role: a named set of channels that users join through `admin_roles` or `role()`.
///
/// `Role` owns the role's JSON in Sync Gateway's shape: input `{"name", "admin_channels"}`,
/// output `{"name", "admin_channels", "all_channels"}` (all channels include those granted
/// to `role:<name>` by documents, which `DatabaseSecurity` looks up). Roles have no
/// password and cannot log in.
public struct Role: Sendable, Equatable {
    public var name: String
    /// Channels set by the admin API or the config.
    public var adminChannels: Set<String>
    /// Admin channels in named collections (`collection_access`).
    public var collectionAccess = CollectionAccess()

    public init(name: String, adminChannels: Set<String> = []) {
        self.name = name
        self.adminChannels = adminChannels
    }

    /// A new role from a PUT/POST body or a config entry. `name` (from the URL or the
    /// config key) wins over, and must match, a `name` in the body.
    public init(json: JSON, name: String? = nil) throws(PrincipalError) {
        guard case .object(let body) = json else { throw PrincipalError(reason: "Role definition must be a JSON object") }
        let resolved = try PrincipalValidation.resolveName(body, name, kind: "role")
        self.init(name: resolved)
        try apply(body)
    }

    /// Applies a PUT on an existing role: only the fields present change.
    public func updated(with json: JSON) throws(PrincipalError) -> Role {
        guard case .object(let body) = json else { throw PrincipalError(reason: "Role definition must be a JSON object") }
        _ = try PrincipalValidation.resolveName(body, name, kind: "role")
        var copy = self
        try copy.apply(body)
        return copy
    }

    private mutating func apply(_ body: [String: JSON]) throws(PrincipalError) {
        for key in body.keys where !["name", "admin_channels", "all_channels", "collection_access"].contains(key) {
            throw PrincipalError(reason: "Unknown field \"\(key)\" in role definition")
        }
        if let channels = body["admin_channels"] {
            let set = try PrincipalValidation.stringSet(channels, field: "admin_channels")
            try PrincipalValidation.validateChannels(set, field: "admin_channels")
            adminChannels = set
        }
        if let access = body["collection_access"] {
            collectionAccess = try CollectionAccess.parse(access, merging: collectionAccess)
        }
    }

    /// The stored form.
    public var storedJSON: JSON {
        var object: [String: JSON] = ["name": .string(name), "admin_channels": PrincipalValidation.sortedArray(adminChannels)]
        if let access = collectionAccess.json() { object["collection_access"] = access }
        return .object(object)
    }

    /// Reads the stored form (nil when it is not one).
    public init?(stored json: JSON) {
        guard let name = json["name"]?.stringValue else { return nil }
        self.init(name: name, adminChannels: Set(json["admin_channels"]?.arrayValue?.compactMap(\.stringValue) ?? []))
        collectionAccess = CollectionAccess(stored: json["collection_access"])
    }

    /// Sync Gateway's GET `/{db}/_role/{name}` body.
    public func publicJSON(allChannels: Set<String>) -> JSON {
        var object: [String: JSON] = [
            "name": .string(name),
            "admin_channels": PrincipalValidation.sortedArray(adminChannels),
            "all_channels": PrincipalValidation.sortedArray(allChannels),
        ]
        if let access = collectionAccess.json() { object["collection_access"] = access }
        return .object(object)
    }
}
