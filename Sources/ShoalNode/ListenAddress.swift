/// A host and port to listen on, parsed from Sync Gateway's `"interface"` form
/// (`":4984"`, `"127.0.0.1:4985"`, `"[::1]:4985"`).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port` or `:port` (all interfaces); nil when malformed.
    public init?(interface: String, defaultHost: String = "0.0.0.0") {
        guard let colon = interface.lastIndex(of: ":"), let port = Int(interface[interface.index(after: colon)...]),
              (0...65535).contains(port)
        else { return nil }
        var host = String(interface[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host.isEmpty ? defaultHost : host
        self.port = port
    }

    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
