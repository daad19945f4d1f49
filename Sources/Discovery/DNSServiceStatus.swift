/// Names for the error codes of the dns_sd API (`DNSServiceErrorType`), for log messages and
/// ``DiscoveryEvent/daemonUnavailable(_:)`` reasons. Pure.
///
/// With Avahi's compat layer a missing daemon or system bus shows up as `Unknown` (-65537)
/// from `DNSServiceRegister`/`DNSServiceBrowse`, and a daemon that goes away as a callback
/// with `Unknown` on every handle.
public enum DNSServiceStatus {
    /// `kDNSServiceErr_NoError`.
    public static let noError: Int32 = 0
    /// `kDNSServiceErr_Unknown`: what Avahi reports for "no daemon" and "daemon gone".
    public static let unknown: Int32 = -65537

    /// The symbolic name of `code`, e.g. `Unknown`, or `error <code>` for codes it does not know.
    public static func name(of code: Int32) -> String {
        switch code {
        case 0: "NoError"
        case -65537: "Unknown"
        case -65538: "NoSuchName"
        case -65539: "NoMemory"
        case -65540: "BadParam"
        case -65541: "BadReference"
        case -65542: "BadState"
        case -65543: "BadFlags"
        case -65544: "Unsupported"
        case -65545: "NotInitialized"
        case -65547: "AlreadyRegistered"
        case -65548: "NameConflict"
        case -65549: "Invalid"
        case -65550: "Firewall"
        case -65551: "Incompatible"
        case -65552: "BadInterfaceIndex"
        case -65553: "Refused"
        case -65554: "NoSuchRecord"
        case -65555: "NoAuth"
        case -65556: "NoSuchKey"
        case -65557: "NATTraversal"
        case -65558: "DoubleNAT"
        case -65559: "BadTime"
        default: "error \(code)"
        }
    }

    /// `call failed: Name (code)`, e.g. `DNSServiceBrowse failed: Unknown (-65537)`.
    public static func describe(_ code: Int32, call: String) -> String {
        "\(call) failed: \(name(of: code)) (\(code))"
    }

    /// The dotted-quad form of a 4-byte A record, or `nil` for any other length.
    public static func ipv4String(_ rdata: some Collection<UInt8>) -> String? {
        guard rdata.count == 4 else { return nil }
        return rdata.map { String($0) }.joined(separator: ".")
    }
}
