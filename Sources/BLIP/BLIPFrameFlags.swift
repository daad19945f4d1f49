/// The message type: the low three bits of a frame's flags.
public enum BLIPMessageType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// A request (MSG).
    case request = 0
    /// A reply (RPY).
    case response = 1
    /// An error reply (ERR).
    case error = 2
    /// Acknowledgement of received request bytes (ACKMSG).
    case ackRequest = 4
    /// Acknowledgement of received reply bytes (ACKRPY).
    case ackResponse = 5

    /// True for ACKMSG and ACKRPY, whose frames have no checksum and don't count in it.
    public var isAck: Bool { self == .ackRequest || self == .ackResponse }

    /// True for RPY and ERR, which share the numbering of the request they answer.
    public var isReply: Bool { self == .response || self == .error }

    public var description: String {
        switch self {
        case .request: "MSG"
        case .response: "RPY"
        case .error: "ERR"
        case .ackRequest: "ACKMSG"
        case .ackResponse: "ACKRPY"
        }
    }
}

/// A frame's flags: the message type in the low three bits plus flag bits.
///
/// Undefined bits are kept (and ignored), as the spec requires.
public struct BLIPFrameFlags: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt64

    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Flags with the given message type and no flag bits.
    public init(type: BLIPMessageType) {
        self.rawValue = UInt64(type.rawValue)
    }

    /// Mask of the 3-bit type field.
    public static let typeMask = BLIPFrameFlags(rawValue: 0x07)
    /// The frame's data went through the deflate context.
    public static let compressed = BLIPFrameFlags(rawValue: 0x08)
    /// The message is urgent.
    public static let urgent = BLIPFrameFlags(rawValue: 0x10)
    /// The request needs no reply.
    public static let noReply = BLIPFrameFlags(rawValue: 0x20)
    /// More frames of this message follow.
    public static let moreComing = BLIPFrameFlags(rawValue: 0x40)

    /// The raw 3-bit type value (0…7).
    public var typeCode: UInt8 { UInt8(rawValue & 0x07) }

    /// The message type, or nil for the undefined type codes 3, 6 and 7.
    public var type: BLIPMessageType? { BLIPMessageType(rawValue: typeCode) }

    public var description: String {
        let name = type?.description ?? "?\(typeCode)?"
        var marks = ""
        if contains(.moreComing) { marks += "M" }
        if contains(.urgent) { marks += "U" }
        if contains(.noReply) { marks += "N" }
        if contains(.compressed) { marks += "Z" }
        return marks.isEmpty ? name : "\(name) \(marks)"
    }
}
