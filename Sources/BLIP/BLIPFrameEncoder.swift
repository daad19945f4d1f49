/// Encodes the frames of one direction of a connection (pure: no I/O).
///
/// A frame is `varint(number) varint(flags) data checksum`: `data` is deflated
/// through this encoder's compression context when the flags say `.compressed`
/// (sync-flushed, trailing `00 00 FF FF` stripped); `checksum` is the big-endian
/// running CRC-32 of all uncompressed data sent so far, this frame's included.
/// ACK frames carry a varint byte count and no checksum.
///
/// Frames must be sent in the order they were encoded (the deflate context and
/// the checksum run across frames). Non-copyable: exactly one owner encodes.
public struct BLIPFrameEncoder: ~Copyable, @unchecked Sendable {
    private var crc = RunningCRC32()
    private var deflater: Deflater?
    private var compressionBroken = false
    /// zlib level of the compression context (0–9).
    public let compressionLevel: Int32

    /// An encoder whose deflate context (created on first use) has `compressionLevel`.
    public init(compressionLevel: Int32 = 6) {
        self.compressionLevel = compressionLevel
    }

    /// Bytes taken by the header of a frame with this number and these flags.
    public static func headerLength(number: UInt64, flags: BLIPFrameFlags) -> Int {
        BLIPVarint.encodedLength(number) + BLIPVarint.encodedLength(flags.rawValue)
    }

    /// Encodes a MSG/RPY/ERR frame that carries `data` (this frame's share of the
    /// encoded message). If zlib fails, the frame goes out uncompressed, without
    /// the `.compressed` flag, and so do all later frames; the peer stays in sync.
    public mutating func encodeFrame(number: UInt64, flags: BLIPFrameFlags, data: ArraySlice<UInt8>) -> [UInt8] {
        var flags = flags
        if flags.contains(.compressed) && compressionContext() == nil {
            flags.remove(.compressed)
        }
        var frame: [UInt8] = []
        frame.reserveCapacity(Self.headerLength(number: number, flags: flags) + data.count + 32)
        BLIPVarint.encode(number, into: &frame)
        let flagsOffset = frame.count
        BLIPVarint.encode(flags.rawValue, into: &frame)
        crc.update(data)
        if flags.contains(.compressed), let deflater {
            if !deflater.compressFrame(data, appendingTo: &frame) {
                // The context is unusable now: fall back to plain frames for good.
                compressionBroken = true
                self.deflater = nil
                flags.remove(.compressed)
                frame.removeSubrange(flagsOffset...)
                BLIPVarint.encode(flags.rawValue, into: &frame)
                frame.append(contentsOf: data)
            }
        } else {
            frame.append(contentsOf: data)
        }
        let checksum = crc.value
        frame.append(UInt8(truncatingIfNeeded: checksum >> 24))
        frame.append(UInt8(truncatingIfNeeded: checksum >> 16))
        frame.append(UInt8(truncatingIfNeeded: checksum >> 8))
        frame.append(UInt8(truncatingIfNeeded: checksum))
        return frame
    }

    /// Encodes an ACKMSG or ACKRPY frame for message `number`: `byteCount` bytes received.
    /// `type` is `.ackRequest` or `.ackResponse` (`.request` means `.ackRequest`, a
    /// reply type `.ackResponse`). ACKs are sent urgent and no-reply, as Couchbase Lite does.
    public func encodeAck(type: BLIPMessageType, number: UInt64, byteCount: UInt64) -> [UInt8] {
        let ackType: BLIPMessageType = (type == .request || type == .ackRequest) ? .ackRequest : .ackResponse
        var frame: [UInt8] = []
        frame.reserveCapacity(24)
        BLIPVarint.encode(number, into: &frame)
        var flags = BLIPFrameFlags(type: ackType)
        flags.insert([.urgent, .noReply])
        BLIPVarint.encode(flags.rawValue, into: &frame)
        BLIPVarint.encode(byteCount, into: &frame)
        return frame
    }

    private mutating func compressionContext() -> Deflater? {
        if deflater == nil && !compressionBroken {
            deflater = Deflater(level: compressionLevel)
            compressionBroken = deflater == nil
        }
        return deflater
    }
}
