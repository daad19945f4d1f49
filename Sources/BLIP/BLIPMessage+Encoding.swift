/// The message encoding of BLIP (spec §3.4): `varint(length of properties)`, the
/// properties as alternating NUL-terminated UTF-8 keys and values, then the body.
extension BLIPMessage {
    /// The encoded message data that is split into frames. NUL characters inside
    /// keys or values cannot be represented and are dropped.
    public func encodedData() -> [UInt8] {
        var propertiesLength = 0
        for (key, value) in properties {
            propertiesLength += Self.encodedLength(key) + Self.encodedLength(value)
        }
        var data: [UInt8] = []
        data.reserveCapacity(BLIPVarint.maxLength + propertiesLength + body.count)
        BLIPVarint.encode(UInt64(propertiesLength), into: &data)
        for (key, value) in properties {
            Self.appendCString(key, to: &data)
            Self.appendCString(value, to: &data)
        }
        data.append(contentsOf: body)
        return data
    }

    /// Bytes of `string` as a C string: its UTF-8 without NULs, plus the terminating NUL.
    /// (`withUTF8` gives every string, small ones included, as contiguous bytes; iterating
    /// `String.UTF8View` went byte by byte through its generic index: 2% of a sender's CPU.)
    private static func encodedLength(_ string: String) -> Int {
        var string = string
        return string.withUTF8 { bytes in bytes.count + 1 - bytes.reduce(0) { $0 + ($1 == 0 ? 1 : 0) } }
    }

    /// The frame flags of this message sent as `type` (no more-coming bit).
    func frameFlags(type: BLIPMessageType) -> BLIPFrameFlags {
        var flags = BLIPFrameFlags(type: type)
        if urgent { flags.insert(.urgent) }
        if compressed { flags.insert(.compressed) }
        if noReply && type == .request { flags.insert(.noReply) }
        return flags
    }

    private static func appendCString(_ string: String, to data: inout [UInt8]) {
        var string = string
        string.withUTF8 { bytes in
            if bytes.contains(0) {
                data.append(contentsOf: bytes.lazy.filter { $0 != 0 })
            } else {
                data.append(contentsOf: bytes)
            }
        }
        data.append(0)
    }

    /// Parses encoded properties (without their length prefix). Returns nil and a
    /// reason when they are malformed: not NUL-terminated, an odd number of strings,
    /// or invalid UTF-8. Empty input means no properties.
    static func decodeProperties(_ bytes: ArraySlice<UInt8>) -> Result<[(String, String)], BLIPError> {
        guard let last = bytes.last else { return .success([]) }
        guard last == 0 else {
            return .failure(BLIPError(code: BLIPError.Code.badRequest, message: "properties are not NUL-terminated"))
        }
        var strings: [String] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == 0 {
                guard let string = String(validating: bytes[start..<index], as: UTF8.self) else {
                    return .failure(BLIPError(
                        code: BLIPError.Code.badRequest,
                        message: "property string #\(strings.count + 1) is not valid UTF-8"))
                }
                strings.append(string)
                start = index + 1
            }
            index += 1
        }
        guard strings.count % 2 == 0 else {
            return .failure(BLIPError(
                code: BLIPError.Code.badRequest,
                message: "properties hold an odd number of strings (\(strings.count))"))
        }
        var pairs: [(String, String)] = []
        pairs.reserveCapacity(strings.count / 2)
        var i = 0
        while i + 1 < strings.count {
            pairs.append((strings[i], strings[i + 1]))
            i += 2
        }
        return .success(pairs)
    }
}
