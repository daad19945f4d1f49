/// The version of Couchbase Mobile's replication protocol a connection speaks, as its
/// WebSocket subprotocol names it (`BLIP_3+CBMobile_<n>`): ordered, so that code asks
/// what a version can do (`>=`) instead of comparing names, as couchbase-lite-core's
/// `compatibleProtocols()` and Sync Gateway's `useHLV()` do. What each version means for
/// documents is Replication's (`ProtocolVersion.namesByVersions` there); BLIP knows only
/// the names and the order.
public enum ProtocolVersion: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// Couchbase Lite 2.x.
    case cbMobile2 = 2
    /// Couchbase Lite 3.x, Sync Gateway 3: revision trees.
    case cbMobile3 = 3
    /// Couchbase Lite 4, Sync Gateway 4: version vectors.
    case cbMobile4 = 4

    /// What a dialer offers and a passive peer accepts by default: Couchbase Lite 3's.
    public static let `default` = ProtocolVersion.cbMobile3

    /// Every version Shoal speaks, preferred first (newest first).
    public static let accepted: [ProtocolVersion] = allCases.sorted(by: >)

    /// The WebSocket subprotocol that names this version.
    public var subprotocol: String { "BLIP_3+CBMobile_\(rawValue)" }

    /// The version a subprotocol names (nil: not one Shoal speaks).
    public init?(subprotocol: String) {
        guard let version = Self.allCases.first(where: { $0.subprotocol == subprotocol }) else { return nil }
        self = version
    }

    /// The versions up to and including this one, newest first: what a dialer that may
    /// speak this one offers.
    public var offers: [ProtocolVersion] { Self.accepted.filter { $0 <= self } }

    public static func < (left: ProtocolVersion, right: ProtocolVersion) -> Bool { left.rawValue < right.rawValue }

    public var description: String { subprotocol }
}
