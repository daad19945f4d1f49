import DocumentModel

/// Validation shared by users and roles: names, channel lists, role lists.
enum PrincipalValidation {
    /// Sync Gateway accepts any non-empty name without `/`, `:` or `,` (they have meanings
    /// in URLs, `role:` prefixes and channel lists) and without control characters.
    static func validateName(_ name: String, kind: String) throws(PrincipalError) {
        guard !name.isEmpty else { throw PrincipalError(reason: "Invalid \(kind) name: empty") }
        guard name.utf8.count <= 240 else { throw PrincipalError(reason: "Invalid \(kind) name: too long") }
        for scalar in name.unicodeScalars where scalar == "/" || scalar == ":" || scalar == "," || scalar.value < 0x20 || scalar.value == 0x7F {
            throw PrincipalError(reason: "Invalid \(kind) name \"\(name)\"")
        }
    }

    /// A list of channel names: `["a", "b"]`. `null` means empty.
    static func stringSet(_ value: JSON, field: String) throws(PrincipalError) -> Set<String> {
        switch value {
        case .null:
            return []
        case .array(let items):
            var result = Set<String>()
            for item in items {
                guard case .string(let s) = item else {
                    throw PrincipalError(reason: "Invalid \(field): must be an array of strings")
                }
                result.insert(s)
            }
            return result
        default:
            throw PrincipalError(reason: "Invalid \(field): must be an array of strings")
        }
    }

    static func validateChannels(_ channels: Set<String>, field: String) throws(PrincipalError) {
        for channel in channels where !ChannelSet.isValidChannelName(channel) {
            throw PrincipalError(reason: "Illegal channel name \"\(channel)\" in \(field)")
        }
    }

    /// The principal's name: from the URL or config key (`name`), which must match a
    /// `name` in the body when both are given.
    static func resolveName(_ body: [String: JSON], _ name: String?, kind: String) throws(PrincipalError) -> String {
        var bodyName: String?
        if let value = body["name"] {
            guard case .string(let s) = value else { throw PrincipalError(reason: "Invalid \(kind) name: must be a string") }
            bodyName = s
        }
        if let name, let bodyName, name != bodyName {
            throw PrincipalError(reason: "Name in body \"\(bodyName)\" does not match the URL \"\(name)\"")
        }
        guard let resolved = name ?? bodyName else { throw PrincipalError(reason: "Missing \(kind) name") }
        try validateName(resolved, kind: kind)
        return resolved
    }

    static func sortedArray(_ set: Set<String>) -> JSON {
        .array(set.sorted().map { .string($0) })
    }
}
