/// A BLIP message: properties (ordered key/value pairs) and a body.
///
/// The same value describes a request, a reply, and the contents of an error reply.
/// Properties keep their order on the wire; a key may appear more than once
/// (`subscript` reads the first occurrence). The flags are message flags of BLIP 3:
/// `urgent` asks the sender to expedite the message, `compressed` sends its frames
/// through the connection's deflate context, and `noReply` (requests only) says
/// that the peer must not answer.
public struct BLIPMessage: Sendable, Equatable {
    /// Ordered key/value pairs. Keys and values are UTF-8 strings without NUL characters.
    public var properties: [(String, String)]
    /// The uninterpreted message body.
    public var body: [UInt8]
    /// Expedite delivery (never to the point of starving other messages).
    public var urgent: Bool
    /// Compress this message's frames with the connection's deflate context.
    public var compressed: Bool
    /// Requests only: the peer must not send a reply.
    public var noReply: Bool
    /// Local, not sent: this request starts only after the previous in-order request
    /// was completely sent, so the peer receives (and handles) such requests in the
    /// order they were queued. For messages whose order matters, like `changes`.
    public var inOrder = false
    /// For a request received from the peer: its request number (the peer's sending
    /// order, since handlers run concurrently). Nil on messages built locally; not
    /// part of equality.
    public internal(set) var requestNumber: UInt64?

    /// Creates a message from its parts.
    public init(
        properties: [(String, String)] = [],
        body: [UInt8] = [],
        urgent: Bool = false,
        compressed: Bool = false,
        noReply: Bool = false
    ) {
        self.properties = properties
        self.body = body
        self.urgent = urgent
        self.compressed = compressed
        self.noReply = noReply
    }

    /// Creates a request whose first property is `Profile: profile`.
    public init(
        profile: String,
        properties: [(String, String)] = [],
        body: [UInt8] = [],
        urgent: Bool = false,
        compressed: Bool = false,
        noReply: Bool = false
    ) {
        self.init(
            properties: [("Profile", profile)] + properties,
            body: body,
            urgent: urgent,
            compressed: compressed,
            noReply: noReply
        )
    }

    /// The first value for `key`; setting replaces the first value, appends a new
    /// pair if the key is absent, and removes every pair for the key when set to nil.
    public subscript(_ key: String) -> String? {
        get {
            for (k, v) in properties where k == key {
                return v
            }
            return nil
        }
        set {
            if let newValue {
                if let index = properties.firstIndex(where: { $0.0 == key }) {
                    properties[index].1 = newValue
                } else {
                    properties.append((key, newValue))
                }
            } else {
                properties.removeAll { $0.0 == key }
            }
        }
    }

    /// The request's `Profile` property, which selects the handler on the receiving side.
    public var profile: String? {
        self["Profile"]
    }

    /// The body decoded as UTF-8 (invalid sequences are replaced).
    public var bodyString: String {
        String(decoding: body, as: UTF8.self)
    }

    public static func == (lhs: BLIPMessage, rhs: BLIPMessage) -> Bool {
        lhs.urgent == rhs.urgent
            && lhs.compressed == rhs.compressed
            && lhs.noReply == rhs.noReply
            && lhs.body == rhs.body
            && propertiesEqual(lhs.properties, rhs.properties)
    }
}

/// Pairwise, order-sensitive equality of property lists.
func propertiesEqual(_ lhs: [(String, String)], _ rhs: [(String, String)]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    for (l, r) in zip(lhs, rhs) where l.0 != r.0 || l.1 != r.1 {
        return false
    }
    return true
}

extension BLIPMessage: CustomStringConvertible {
    /// A short description: profile, flags, property count and body size.
    public var description: String {
        var flags = ""
        if urgent { flags += "U" }
        if noReply { flags += "N" }
        if compressed { flags += "Z" }
        let name = profile.map { "'\($0)' " } ?? ""
        return "BLIPMessage(\(name)\(flags.isEmpty ? "" : flags + " ")"
            + "\(properties.count) properties, \(body.count) bytes)"
    }
}
