/// One decoded frame: header, uncompressed data, and its size on the wire.
///
/// For MSG/RPY/ERR (and undefined types) `payload` is the frame's share of the
/// message data, already decompressed and checksum-verified. For ACK frames it is
/// empty and `ackByteCount` holds the acknowledged byte count.
public struct BLIPFrame: Sendable, Equatable {
    /// Request number (replies and ACKs use the number of the message they refer to).
    public var number: UInt64
    /// Type and flag bits.
    public var flags: BLIPFrameFlags
    /// The uncompressed message data carried by this frame.
    public var payload: [UInt8]
    /// Bytes after the header on the wire (compressed data + checksum): the unit
    /// in which flow control counts and ACKs acknowledge.
    public var wireSize: Int
    /// ACK frames: the byte count they acknowledge.
    public var ackByteCount: UInt64

    /// Creates a frame.
    public init(
        number: UInt64, flags: BLIPFrameFlags, payload: [UInt8] = [], wireSize: Int = 0, ackByteCount: UInt64 = 0
    ) {
        self.number = number
        self.flags = flags
        self.payload = payload
        self.wireSize = wireSize
        self.ackByteCount = ackByteCount
    }
}
