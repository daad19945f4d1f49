import DocumentModel

/// Turns the text Duktape hands out into Swift values.
///
/// Duktape strings are CESU-8: a character outside the Basic Multilingual Plane is stored as
/// a UTF-16 surrogate pair, each half encoded as its own 3-byte sequence (ED A0..BF xx), which
/// is not valid UTF-8. `DuktapeText` owns the repair: paired halves become one 4-byte UTF-8
/// sequence, a lone half becomes U+FFFD (as Shoal's JSON parser does for a lone `\u` escape).
/// Text going *into* Duktape through the C API needs the opposite: Duktape keeps a 4-byte UTF-8
/// sequence as one code point of length 1, which would differ from the same character in the
/// script's source (which the compiler turns into a surrogate pair). `cesu8(_:)` rewrites such
/// sequences as pairs, so `"😀".length` is 2 and `doc.s === "😀"` holds, as in any ES5 engine.
enum DuktapeText {
    /// The text Duktape receives for `value`: its canonical JSON (object keys sorted by UTF-8
    /// bytes, so a script's `for in` order is the same on every node), in CESU-8.
    static func input(_ value: JSON) -> [UInt8] {
        cesu8(value.canonicalBytes())
    }

    /// The CESU-8 form of UTF-8 `bytes` (JSON text or a plain string): each 4-byte sequence
    /// becomes a surrogate pair of 3-byte sequences. Returns `bytes` itself when it has none.
    static func cesu8(_ bytes: [UInt8]) -> [UInt8] {
        guard let first = bytes.firstIndex(where: { $0 >= 0xF0 }) else { return bytes }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count + 16)
        out.append(contentsOf: bytes[0..<first])
        var i = first
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            guard b >= 0xF0, i + 3 < n else {
                out.append(b)
                i += 1
                continue
            }
            let scalar = (UInt32(b & 0x07) << 18) | (UInt32(bytes[i + 1] & 0x3F) << 12)
                | (UInt32(bytes[i + 2] & 0x3F) << 6) | UInt32(bytes[i + 3] & 0x3F)
            let offset = scalar &- 0x10000
            for unit in [0xD800 + (offset >> 10), 0xDC00 + (offset & 0x3FF)] {
                out.append(0xED)
                out.append(UInt8(0x80 | ((unit >> 6) & 0x3F)))
                out.append(UInt8(0x80 | (unit & 0x3F)))
            }
            i += 4
        }
        return out
    }

    /// Parses JSON text produced by Duktape (`duk_json_encode`).
    static func json(_ pointer: UnsafePointer<CChar>, count: Int) throws(JSError) -> JSON {
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: count)
        do {
            if let repaired = repairedUTF8(bytes) {
                return try JSON.parse(repaired)
            }
            return try JSON.parse(bytes)
        } catch {
            throw JSError.thrown(.string("TypeError: the engine produced invalid JSON: \(error.reason)"))
        }
    }

    /// Decodes a plain string produced by Duktape (e.g. a message).
    static func string(_ pointer: UnsafePointer<CChar>, count: Int) -> String {
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: count)
        if let repaired = repairedUTF8(bytes) {
            return String(decoding: repaired, as: UTF8.self)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The UTF-8 form of CESU-8 `bytes`, or nil when `bytes` holds no surrogate (the usual
    /// case, detected with one scan and no allocation).
    static func repairedUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard let first = firstSurrogate(in: bytes) else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count)
        out.append(contentsOf: bytes[0..<first])
        var i = first
        let n = bytes.count
        while i < n {
            guard let high = surrogate(in: bytes, at: i) else {
                out.append(bytes[i])
                i += 1
                continue
            }
            if high < 0xDC00, let low = surrogate(in: bytes, at: i + 3), low >= 0xDC00 {
                let scalar = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                out.append(UInt8(0xF0 | (scalar >> 18)))
                out.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
                out.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
                out.append(UInt8(0x80 | (scalar & 0x3F)))
                i += 6
            } else {
                out.append(contentsOf: [0xEF, 0xBF, 0xBD])
                i += 3
            }
        }
        return out
    }

    private static func firstSurrogate(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        let n = bytes.count
        while i < n {
            if bytes[i] == 0xED, surrogate(in: bytes, at: i) != nil { return i }
            i += 1
        }
        return nil
    }

    /// The UTF-16 surrogate (0xD800...0xDFFF) encoded as 3 bytes at `i`, if there is one.
    @inline(__always)
    private static func surrogate(in bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> UInt32? {
        guard i + 2 < bytes.count, bytes[i] == 0xED else { return nil }
        let b1 = bytes[i + 1], b2 = bytes[i + 2]
        guard b1 >= 0xA0, b1 <= 0xBF, b2 & 0xC0 == 0x80 else { return nil }
        return 0xD000 | (UInt32(b1 & 0x3F) << 6) | UInt32(b2 & 0x3F)
    }
}
