import Foundation

/// The message encoding of BLIP (spec §3.4): `varint(length of properties)`, the
/// properties as alternating NUL-terminated UTF-8 keys and values, then the body.
extension BLIPMessage {
    /// The encoded message data that is split into frames. NUL characters inside
    /// keys or values cannot be represented and are dropped.
    public func encodedData() -> [UInt8] {
        var propertiesLength = 0
        var utf8Length = 0
        for (key, value) in properties {
            propertiesLength += Self.encodedLength(key) + Self.encodedLength(value)
            utf8Length += key.utf8.count + value.utf8.count + 2
        }
        // Strings are searched for NULs once: when none had any, they are copied as they are.
        let dropNULs = propertiesLength != utf8Length
        var data: [UInt8] = []
        data.reserveCapacity(BLIPVarint.maxLength + propertiesLength + body.count)
        BLIPVarint.encode(UInt64(propertiesLength), into: &data)
        for (key, value) in properties {
            Self.appendCString(key, to: &data, droppingNULs: dropNULs)
            Self.appendCString(value, to: &data, droppingNULs: dropNULs)
        }
        data.append(contentsOf: body)
        return data
    }

    /// Bytes of `string` as a C string: its UTF-8 without NULs, plus the terminating NUL.
    /// (`withUTF8` gives every string, small ones included, as contiguous bytes; iterating
    /// `String.UTF8View` went byte by byte through its generic index: 2% of a sender's CPU.)
    private static func encodedLength(_ string: String) -> Int {
        var string = string
        return string.withUTF8 { bytes in
            guard hasNUL(bytes) else { return bytes.count + 1 }
            return bytes.count + 1 - bytes.reduce(0) { $0 + ($1 == 0 ? 1 : 0) }
        }
    }

    /// Whether `bytes` hold a NUL (`memchr`, many bytes a step; almost never true).
    private static func hasNUL(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
        return memchr(base, 0, bytes.count) != nil
    }

    /// The frame flags of this message sent as `type` (no more-coming bit).
    func frameFlags(type: BLIPMessageType) -> BLIPFrameFlags {
        var flags = BLIPFrameFlags(type: type)
        if urgent { flags.insert(.urgent) }
        if compressed { flags.insert(.compressed) }
        if noReply && type == .request { flags.insert(.noReply) }
        return flags
    }

    private static func appendCString(_ string: String, to data: inout [UInt8], droppingNULs: Bool) {
        var string = string
        string.withUTF8 { bytes in
            if droppingNULs && hasNUL(bytes) {
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
    ///
    /// One pass over the bytes finds the NULs and whether a string has a byte outside
    /// ASCII: an ASCII string (every property Couchbase Lite and Shoal send) is made
    /// straight from its bytes; only another one goes through UTF-8 validation, whose
    /// generic path cost about 1,000 instructions a string (10% of a pulling node's).
    static func decodeProperties(_ bytes: ArraySlice<UInt8>) -> Result<[(String, String)], BLIPError> {
        guard let last = bytes.last else { return .success([]) }
        guard last == 0 else {
            return .failure(BLIPError(code: BLIPError.Code.badRequest, message: "properties are not NUL-terminated"))
        }
        return bytes.withUnsafeBufferPointer { buffer in
            var strings: [String] = []
            strings.reserveCapacity(16)
            var start = 0
            var seen: UInt8 = 0
            for index in buffer.indices {
                let byte = buffer[index]
                guard byte == 0 else {
                    seen |= byte
                    continue
                }
                let utf8 = UnsafeBufferPointer(rebasing: buffer[start..<index])
                guard let string = seen < 0x80 ? String(decoding: utf8, as: UTF8.self) : String(validating: utf8, as: UTF8.self)
                else {
                    return .failure(BLIPError(
                        code: BLIPError.Code.badRequest,
                        message: "property string #\(strings.count + 1) is not valid UTF-8"))
                }
                strings.append(string)
                start = index + 1
                seen = 0
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
}
