/// Limits and tunables of a BLIP connection and its codecs.
///
/// The defaults are the numbers of Couchbase Lite: 16 KB frames, an ACK every 50 000
/// received bytes of a message, a sender pause above 128 000 unacknowledged bytes,
/// at most 100 KB of properties, deflate level 6.
public struct BLIPConfiguration: Sendable {
    /// Message bytes (before compression) carried by one frame. A normal message
    /// uses `smallFrameSize` instead while an urgent message waits behind it.
    public var maxFrameSize: Int = 16 * 1024
    /// Frame size for normal messages while an urgent message is waiting.
    public var smallFrameSize: Int = 4 * 1024
    /// Receiver side: send an ACK each time this many more bytes of a message arrived.
    public var ackInterval: Int = 50_000
    /// Sender side: pause a message while more than this many of its bytes are unacknowledged.
    public var maxUnackedBytes: Int = 128_000
    /// Largest accepted encoded properties of an incoming message; larger is fatal.
    public var maxPropertiesSize: Int = 100 * 1024
    /// Largest accepted incoming message (properties + body, uncompressed); larger is fatal.
    public var maxMessageSize: Int = 128 * 1024 * 1024
    /// zlib level (0–9, or -1 for zlib's default) of the outgoing deflate context.
    public var compressionLevel: Int32 = 6

    /// The defaults.
    public init() {}

    /// Frame size actually used: at least 64 bytes, so that every frame makes progress.
    var effectiveMaxFrameSize: Int { max(64, maxFrameSize) }
    /// Small frame size actually used: between 64 bytes and `effectiveMaxFrameSize`.
    var effectiveSmallFrameSize: Int { min(effectiveMaxFrameSize, max(64, smallFrameSize)) }
}
