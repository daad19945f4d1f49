/// What one decoded frame means to the connection (output of `BLIPMessageDecoder`).
public enum BLIPDecoderEvent: Sendable, Equatable {
    /// Part of a message arrived; nothing to do yet.
    case partial
    /// The frame completed a message of type `.request`, `.response` or `.error`.
    case message(BLIPMessageType, number: UInt64, BLIPMessage)
    /// The peer acknowledged `byteCount` bytes of our outgoing request
    /// (`.ackRequest`) or reply (`.ackResponse`) number `number`.
    case acknowledged(BLIPMessageType, number: UInt64, byteCount: UInt64)
    /// Enough of an incoming message arrived: send this ACK (`.ackRequest` for a
    /// request, `.ackResponse` for a reply) with `byteCount` bytes received so far.
    case shouldAcknowledge(BLIPMessageType, number: UInt64, byteCount: UInt64)
    /// A frame error: the message completed but is malformed (its properties are
    /// longer than the message, not NUL-terminated, an odd number of strings, or
    /// invalid UTF-8). The message is dropped; the connection goes on.
    case malformedMessage(BLIPMessageType, number: UInt64, noReply: Bool, BLIPError)
    /// A frame error: the frame was ignored (undefined type, or a frame for a
    /// message that already completed).
    case ignoredFrame(String)
}
