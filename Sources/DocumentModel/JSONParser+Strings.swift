// String parsing: UTF-8 validation, escapes and surrogate pairs.

extension JSONParser {
    /// Parses a string; `pos` is at the opening quote.
    mutating func parseString() throws(JSONError) -> String {
        let start = pos
        pos += 1
        var runStart = pos
        var escaped = false
        while true {
            guard pos < count else {
                throw .make("unterminated string starting", at: start)
            }
            pos = skipPlainASCII(from: pos)
            guard pos < count else {
                throw .make("unterminated string starting", at: start)
            }
            let b = buf[pos]
            if b == UInt8(ascii: "\"") {
                let run = UnsafeBufferPointer(rebasing: buf[runStart..<pos])
                pos += 1
                if !escaped {
                    return String(decoding: run, as: UTF8.self)
                }
                scratch.append(contentsOf: run)
                return String(decoding: scratch, as: UTF8.self)
            }
            if b == UInt8(ascii: "\\") {
                canonical = false  // conservative: the canonical writer escapes only a few characters
                if !escaped {
                    scratch.removeAll(keepingCapacity: true)
                    escaped = true
                }
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: buf[runStart..<pos]))
                try parseEscape(stringStart: start)
                runStart = pos
            } else if b < 0x20 {
                throw .make("unescaped control character \(JSONError.describe(b)) in string", at: pos)
            } else if b < 0x80 {
                pos += 1
            } else {
                try skipUTF8Sequence(lead: b)
            }
        }
    }

    /// The first position at or after `from` holding a byte that is not plain
    /// printable ASCII (a quote, backslash, control or non-ASCII byte), or `count`.
    @inline(__always)
    func skipPlainASCII(from: Int) -> Int {
        guard let base = buf.baseAddress else { return from }
        var p = from
        let end = count
        // Eight bytes at a time while none of them is special, then byte by byte.
        while p &+ 8 <= end, !ByteWord.hasEscapeOrNonASCII(ByteWord.load(base, at: p)) {
            p &+= 8
        }
        while p < end {
            let b = base[p]
            if b < 0x20 || b >= 0x80 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") { return p }
            p &+= 1
        }
        return p
    }

    /// Validates one multi-byte UTF-8 sequence at `pos` (RFC 3629: no overlongs,
    /// no surrogates, nothing above U+10FFFF) and moves past it.
    @inline(__always)
    mutating func skipUTF8Sequence(lead: UInt8) throws(JSONError) {
        var need = 0
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: need = 1
        case 0xE0: need = 2; low = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: need = 2
        case 0xED: need = 2; high = 0x9F
        case 0xF0: need = 3; low = 0x90
        case 0xF1...0xF3: need = 3
        case 0xF4: need = 3; high = 0x8F
        default: throw .make("invalid UTF-8", at: pos)
        }
        guard pos + need < count else { throw .make("invalid UTF-8", at: pos) }
        let second = buf[pos + 1]
        guard second >= low && second <= high else { throw .make("invalid UTF-8", at: pos) }
        var k = 2
        while k <= need {
            guard buf[pos + k] & 0xC0 == 0x80 else { throw .make("invalid UTF-8", at: pos) }
            k += 1
        }
        pos += need + 1
    }

    /// Decodes one escape at `pos` (the backslash) into `scratch`.
    mutating func parseEscape(stringStart: Int) throws(JSONError) {
        let escapeStart = pos
        guard pos + 1 < count else { throw .make("unterminated string starting", at: stringStart) }
        let c = buf[pos + 1]
        pos += 2
        switch c {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
            scratch.append(c)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            guard var scalar = hex4(at: pos) else {
                for i in pos..<min(pos + 4, count) where hex4Digit(buf[i]) == nil {
                    throw .make("invalid \\u escape", at: escapeStart)
                }
                throw .make("unterminated string starting", at: stringStart)
            }
            pos += 4
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                if pos + 6 <= count, buf[pos] == UInt8(ascii: "\\"), buf[pos + 1] == UInt8(ascii: "u"),
                   let lowHalf = hex4(at: pos + 2), lowHalf >= 0xDC00 && lowHalf <= 0xDFFF {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (lowHalf - 0xDC00)
                    pos += 6
                } else {
                    scalar = 0xFFFD
                }
            } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                scalar = 0xFFFD
            }
            appendUTF8(scalar)
        default:
            if c < 0x20 || c >= 0x7F {
                throw .make("invalid escape", at: escapeStart)
            }
            throw .make("invalid escape '\\\(Character(Unicode.Scalar(c)))'", at: escapeStart)
        }
    }

    /// The value of four hex digits at `offset`, or nil.
    @inline(__always)
    func hex4(at offset: Int) -> UInt32? {
        guard offset + 4 <= count else { return nil }
        var value: UInt32 = 0
        for i in offset..<offset + 4 {
            guard let digit = hex4Digit(buf[i]) else { return nil }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    @inline(__always)
    func hex4Digit(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b &- 0x30
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b &- 0x57
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b &- 0x37
        default: return nil
        }
    }

    /// Appends the UTF-8 encoding of a Unicode scalar value (not a surrogate).
    @inline(__always)
    mutating func appendUTF8(_ v: UInt32) {
        switch v {
        case 0..<0x80:
            scratch.append(UInt8(v))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | (v >> 6)))
            scratch.append(UInt8(0x80 | (v & 0x3F)))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | (v >> 12)))
            scratch.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (v & 0x3F)))
        default:
            scratch.append(UInt8(0xF0 | (v >> 18)))
            scratch.append(UInt8(0x80 | ((v >> 12) & 0x3F)))
            scratch.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (v & 0x3F)))
        }
    }
}
