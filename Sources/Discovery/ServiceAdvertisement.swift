/// What a Shoal node says about itself in its TXT record, and how that maps to TXT keys.
/// Pure: no I/O.
///
/// | key | value |
/// |---|---|
/// | `id` | the node ID (the instance name may be a truncated or renamed copy) |
/// | `db` | the databases, comma-separated; when longer than one TXT entry allows, the list is cut into `db`, `db1`, `db2`, … which a reader concatenates in that order |
/// | `proto` | the replication protocol version |
/// | `group` | the mesh group (see ``ServiceNaming/txtGroupValue(for:)``) |
///
/// Readers look keys up by name (Avahi reverses the order) and ignore keys they do not know.
public struct ServiceAdvertisement: Sendable, Equatable, Hashable {
    /// TXT key of the node ID.
    public static let idKey = "id"
    /// TXT key of the (first chunk of the) database list.
    public static let databasesKey = "db"
    /// TXT key of the protocol version.
    public static let protocolKey = "proto"
    /// TXT key of the mesh group.
    public static let groupKey = "group"
    /// The most bytes of the database list put in one chunk (`db99=` leaves 250).
    static let databaseChunkLength = 250

    /// TXT `id`; `nil` when a peer did not send one.
    public var nodeID: String?
    /// TXT `db`.
    public var databases: [String]
    /// TXT `proto`.
    public var protocolVersion: String?
    /// TXT `group` (already in its TXT form); `nil` when a peer did not send one.
    public var group: String?

    /// An advertisement with the given fields.
    public init(nodeID: String?, databases: [String], protocolVersion: String?, group: String?) {
        self.nodeID = nodeID
        self.databases = databases
        self.protocolVersion = protocolVersion
        self.group = group
    }

    /// What this node advertises for `configuration`.
    public init(configuration: DiscoveryConfiguration) {
        self.init(
            nodeID: configuration.nodeID,
            databases: configuration.databases,
            protocolVersion: configuration.protocolVersion,
            group: ServiceNaming.txtGroupValue(for: configuration.group)
        )
    }

    /// Reads the known keys of a resolved TXT record.
    public init(txt: TXTRecord) {
        nodeID = txt[Self.idKey].flatMap { $0.isEmpty ? nil : $0 }
        protocolVersion = txt[Self.protocolKey]
        group = txt[Self.groupKey]
        var joined = txt[Self.databasesKey] ?? ""
        var chunk = 1
        while let more = txt[Self.databasesKey + String(chunk)] {
            joined += more
            chunk += 1
        }
        databases = joined.split(separator: ",", omittingEmptySubsequences: true).map(String.init)
    }

    /// The TXT record: `id`, `db` (and `db1`… if needed), `proto`, `group`, in that order.
    public func txtRecord() -> TXTRecord {
        var txt = TXTRecord()
        if let nodeID {
            txt.append(key: Self.idKey, value: ServiceNaming.truncateUTF8(nodeID, maxBytes: 252))
        }
        let chunks = Self.chunks(of: databases.joined(separator: ","))
        for (index, chunk) in chunks.enumerated() {
            txt.append(key: index == 0 ? Self.databasesKey : Self.databasesKey + String(index), value: chunk)
        }
        if let protocolVersion {
            txt.append(key: Self.protocolKey, value: ServiceNaming.truncateUTF8(protocolVersion, maxBytes: 249))
        }
        if let group {
            txt.append(key: Self.groupKey, value: ServiceNaming.truncateUTF8(group, maxBytes: 249))
        }
        return txt
    }

    /// Whether a peer advertising this belongs to `group` (a raw mesh group). A peer without a
    /// `group` key is accepted: the subtype it was browsed under already matched.
    public func isMember(ofGroup group: String) -> Bool {
        guard let advertised = self.group else { return true }
        return advertised == ServiceNaming.txtGroupValue(for: group)
    }

    /// `joined` cut into pieces of at most ``databaseChunkLength`` bytes on character
    /// boundaries; always at least one (possibly empty) piece.
    static func chunks(of joined: String) -> [String] {
        var pieces: [String] = []
        var current = ""
        var used = 0
        for character in joined {
            let size = character.utf8.count
            if used + size > databaseChunkLength {
                pieces.append(current)
                current = ""
                used = 0
            }
            current.append(character)
            used += size
        }
        pieces.append(current)
        return pieces
    }
}
