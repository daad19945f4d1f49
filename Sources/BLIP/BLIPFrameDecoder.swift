/// Decodes the frames of one direction of a connection (pure: no I/O).
///
/// Reads the header, checks the running CRC-32, inflates compressed data through
/// this decoder's decompression context, and returns the frame. Every error it
/// throws is fatal for the connection (the spec's list: bad varint, missing
/// header, bad deflate data, checksum mismatch; plus a frame too short to hold a
/// checksum and a frame that inflates beyond the message size limit). After a
/// fatal error the decoder is spent: every later call throws the same error.
///
/// Frames of undefined types (3, 6, 7) go through the checksum and the
/// decompression context like any data frame, so that a later frame still decodes;
/// the caller decides to ignore them. Non-copyable: exactly one owner decodes.
public struct BLIPFrameDecoder: ~Copyable, @unchecked Sendable {
    private var crc = RunningCRC32()
    private var inflater: Inflater?
    private var failure: BLIPError?
    /// Largest number of bytes one frame may inflate to.
    public let maxFrameOutput: Int

    /// A decoder; `maxFrameOutput` bounds what a single compressed frame may expand to.
    public init(maxFrameOutput: Int = BLIPConfiguration().maxMessageSize) {
        self.maxFrameOutput = max(0, maxFrameOutput)
    }

    /// Decodes one frame (one binary transport message).
    public mutating func decode(_ bytes: [UInt8]) throws(BLIPError) -> BLIPFrame {
        if let failure {
            throw failure
        }
        do {
            return try decodeFrame(bytes[...])
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func decodeFrame(_ bytes: ArraySlice<UInt8>) throws(BLIPError) -> BLIPFrame {
        guard !bytes.isEmpty else {
            throw .protocolError("empty frame")
        }
        var cursor = bytes.startIndex
        let number: UInt64
        let rawFlags: UInt64
        do {
            let (value, length) = try BLIPVarint.decode(bytes[cursor...])
            number = value
            cursor += length
        } catch {
            throw .protocolError("bad message number varint in frame header (\(error))")
        }
        guard cursor < bytes.endIndex else {
            throw .protocolError("frame header has no flags (message #\(number))")
        }
        do {
            let (value, length) = try BLIPVarint.decode(bytes[cursor...])
            rawFlags = value
            cursor += length
        } catch {
            throw .protocolError("bad flags varint in frame header (message #\(number), \(error))")
        }
        let flags = BLIPFrameFlags(rawValue: rawFlags)
        let rest = bytes[cursor...]

        if let type = flags.type, type.isAck {
            let count: UInt64
            do {
                count = try BLIPVarint.decode(rest).value
            } catch {
                throw .protocolError("bad byte count varint in \(type) #\(number) (\(error))")
            }
            return BLIPFrame(number: number, flags: flags, wireSize: rest.count, ackByteCount: count)
        }

        guard rest.count >= 4 else {
            throw .protocolError("\(flags) frame #\(number) too short for its checksum (\(rest.count) bytes)")
        }
        let dataEnd = rest.endIndex - 4
        let data = rest[rest.startIndex..<dataEnd]
        let expected = UInt32(rest[dataEnd]) << 24 | UInt32(rest[dataEnd + 1]) << 16
            | UInt32(rest[dataEnd + 2]) << 8 | UInt32(rest[dataEnd + 3])

        var payload: [UInt8]
        if flags.contains(.compressed) && !data.isEmpty {
            payload = []
            payload.reserveCapacity(data.count * 4)
            try inflate(data, into: &payload, number: number, flags: flags)
        } else {
            payload = Array(data)
        }
        crc.update(payload)
        guard crc.value == expected else {
            throw .protocolError(
                "checksum mismatch in \(flags) frame #\(number): got \(hex(expected)), expected \(hex(crc.value))")
        }
        return BLIPFrame(number: number, flags: flags, payload: payload, wireSize: rest.count)
    }

    private mutating func inflate(
        _ data: ArraySlice<UInt8>, into payload: inout [UInt8], number: UInt64, flags: BLIPFrameFlags
    ) throws(BLIPError) {
        if inflater == nil {
            inflater = Inflater()
        }
        guard let inflater else {
            throw BLIPError(code: BLIPError.Code.unspecified, message: "cannot allocate a zlib inflate context")
        }
        do {
            try inflater.inflateFrame(data, limit: maxFrameOutput, appendingTo: &payload)
        } catch {
            let reason: String
            switch error {
            case .invalidData(let message): reason = "invalid deflate data (\(message))"
            case .streamEnded: reason = "deflate data ends the stream (final block)"
            case .tooLarge: reason = "frame inflates to more than \(maxFrameOutput) bytes"
            case .truncated: reason = "deflate data does not end on a block boundary"
            }
            throw .protocolError("\(reason) in \(flags) frame #\(number)")
        }
    }
}

/// `0x` and eight hex digits.
func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}
