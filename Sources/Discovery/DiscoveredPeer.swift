/// A peer found by DNS-SD or configured statically.
///
/// For an mDNS peer every field comes from its DNS-SD service: `nodeID` from the TXT key `id`
/// (or the instance name when a peer sends no `id`), `host` from the IPv4 address of the
/// service's host target, `port` from the SRV record, `databases` and `protocolVersion` from
/// the TXT keys `db` and `proto`. For a static peer see ``init(staticURL:)``.
public struct DiscoveredPeer: Sendable, Equatable, Hashable {
    /// TXT `id` (the instance name is the node ID too).
    public var nodeID: String
    /// The resolved IPv4 address as a string (e.g. `10.88.0.12`); for static peers the URL host.
    public var host: String
    /// The peer's public port.
    public var port: Int
    /// TXT `db` (comma-separated on the wire).
    public var databases: [String]
    /// TXT `proto`.
    public var protocolVersion: String?
    /// Where the peer came from.
    public var source: Source

    /// How a peer became known.
    public enum Source: String, Sendable {
        /// Found by DNS-SD browsing through the host's avahi-daemon.
        case mdns
        /// Given on the command line or in the configuration.
        case `static`
    }

    /// A peer with all fields given.
    public init(
        nodeID: String,
        host: String,
        port: Int,
        databases: [String],
        protocolVersion: String? = nil,
        source: Source
    ) {
        self.nodeID = nodeID
        self.host = host
        self.port = port
        self.databases = databases
        self.protocolVersion = protocolVersion
        self.source = source
    }
}

extension DiscoveredPeer {
    /// The port assumed when a static peer URL has none (Shoal's public port).
    public static let defaultStaticPort = 4984

    /// A static peer from a URL such as `ws://10.0.0.5:4984/orders` (`--peer` on the command
    /// line). Pure parsing, no lookup.
    ///
    /// Accepted schemes are `ws`, `wss`, `http` and `https`; the host may be a name, an IPv4
    /// address or a bracketed IPv6 address (kept without brackets); a missing port means
    /// ``defaultStaticPort``; the first path component, if any, is the only database. A static
    /// peer's node ID is not known before it is connected, so `nodeID` defaults to `host:port`;
    /// the caller may replace it once the peer has said who it is.
    ///
    /// Returns `nil` for anything else (no scheme, an empty host, a port outside 1…65535).
    public init?(staticURL: String, nodeID: String? = nil) {
        guard let schemeEnd = staticURL.range(of: "://") else { return nil }
        let scheme = staticURL[..<schemeEnd.lowerBound].lowercased()
        guard ["ws", "wss", "http", "https"].contains(scheme) else { return nil }
        var rest = staticURL[schemeEnd.upperBound...]
        var path = Substring("")
        if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            path = rest[slash...]
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { return nil }
        var port = Self.defaultStaticPort
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else { return nil }
            port = value
        }
        var databases: [String] = []
        if path.hasPrefix("/") {
            let first = path.dropFirst().prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            if !first.isEmpty { databases = [String(first)] }
        }
        let hostString = String(host)
        self.init(
            nodeID: nodeID ?? "\(hostString):\(port)",
            host: hostString,
            port: port,
            databases: databases,
            protocolVersion: nil,
            source: .static
        )
    }
}
