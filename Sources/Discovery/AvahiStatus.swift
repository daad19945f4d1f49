import CAvahi

/// Words for Avahi's error codes (`AVAHI_ERR_*`, negative), for log messages and
/// ``DiscoveryEvent/daemonUnavailable(_:)`` reasons, and the decoding of A records.
public enum AvahiStatus {
    /// `AVAHI_OK`.
    public static let ok: Int32 = 0
    /// `AVAHI_ERR_FAILURE`: what a handle reports when no better code is known.
    public static let failure: Int32 = -1

    /// Avahi's text for `code`, e.g. `Daemon not running`.
    public static func text(of code: Int32) -> String {
        guard let text = avahi_strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// `call failed: text (code)`, e.g. `avahi_client_new failed: Daemon not running (-26)`.
    public static func describe(_ code: Int32, call: String) -> String {
        "\(call) failed: \(text(of: code)) (\(code))"
    }

    /// The dotted-quad form of a 4-byte A record, or `nil` for any other length.
    public static func ipv4String(_ rdata: some Collection<UInt8>) -> String? {
        guard rdata.count == 4 else { return nil }
        return rdata.map { String($0) }.joined(separator: ".")
    }
}

/// Avahi's constants that C declares in anonymous enums (Swift sees them as `Int`).
enum Avahi {
    static let anyInterface = AvahiIfIndex(AVAHI_IF_UNSPEC)
    static let anyProtocol = AvahiProtocol(AVAHI_PROTO_UNSPEC)
    static let ipv4 = AvahiProtocol(AVAHI_PROTO_INET)
    static let collision = Int32(AVAHI_ERR_COLLISION)
}
