/// Message in, frames out: encodes one direction of a BLIP connection (pure: no I/O).
///
/// `encode` splits one message into consecutive frames of at most `maxFrameSize`
/// bytes of message data each (before compression). Interleaving several messages
/// is the connection's job; it uses `BLIPFrameEncoder` frame by frame. All frames
/// must be sent in the order they were produced.
public struct BLIPMessageEncoder: ~Copyable, Sendable {
    private var frames: BLIPFrameEncoder
    /// Message bytes per frame (before compression).
    public let maxFrameSize: Int

    /// An encoder with the frame size and compression level of `configuration`.
    public init(configuration: BLIPConfiguration = .init()) {
        frames = BLIPFrameEncoder(compressionLevel: configuration.compressionLevel)
        maxFrameSize = configuration.effectiveMaxFrameSize
    }

    /// All frames of `message` sent as `type` (`.request`, `.response` or `.error`)
    /// with number `number`, in order; all but the last have `.moreComing`.
    public mutating func encode(_ message: BLIPMessage, type: BLIPMessageType, number: UInt64) -> [[UInt8]] {
        let data = message.encodedData()
        let flags = message.frameFlags(type: type)
        var result: [[UInt8]] = []
        result.reserveCapacity(data.count / maxFrameSize + 1)
        var offset = 0
        repeat {
            let end = min(data.count, offset + maxFrameSize)
            var frameFlags = flags
            if end < data.count {
                frameFlags.insert(.moreComing)
            }
            result.append(frames.encodeFrame(number: number, flags: frameFlags, data: data[offset..<end]))
            offset = end
        } while offset < data.count
        return result
    }

    /// The frames of an ERR reply carrying `error` for request `number`.
    public mutating func encodeError(_ error: BLIPError, number: UInt64) -> [[UInt8]] {
        encode(error.errorMessage(), type: .error, number: number)
    }

    /// An ACK frame (`.ackRequest` or `.ackResponse`) for message `number`.
    public func encodeAck(type: BLIPMessageType, number: UInt64, byteCount: UInt64) -> [UInt8] {
        frames.encodeAck(type: type, number: number, byteCount: byteCount)
    }
}
