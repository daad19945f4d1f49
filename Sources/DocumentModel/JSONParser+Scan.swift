// Validation without building values: recognizes a body that is exactly canonical JSON
// (see `canonical`) and records where its top-level members are, so that a receiver can
// store the bytes as they are and read single properties without parsing the rest.

extension JSONParser {
    /// Where one top-level member's key (without quotes) and value are in the buffer.
    struct MemberRanges: Sendable {
        let key: Range<Int>
        let value: Range<Int>
    }

    /// Thrown inside the scan at the first byte that is not canonical; never escapes it.
    private static let notCanonical = JSONError.make("not canonical", at: 0)

    /// The members of the object `buf` holds, when `buf` is valid JSON in exactly the
    /// form `canonicalBytes()` writes and every object key at every depth is ASCII
    /// (keys that differ in bytes can be equal as `String`s only beyond ASCII); nil for
    /// anything else, valid or not (the caller then parses, which reports errors).
    /// Accepts only what `parseReportingCanonical` accepts as canonical.
    static func scanCanonicalObject(_ buf: UnsafeBufferPointer<UInt8>) -> [MemberRanges]? {
        guard let first = buf.first, first == UInt8(ascii: "{") else { return nil }
        var parser = JSONParser(buf)
        var members: [MemberRanges] = []
        do {
            try parser.scanObject(collecting: &members, top: true)
        } catch {
            return nil
        }
        guard parser.canonical, parser.pos == parser.count else { return nil }
        return members
    }

    /// Skips one value, validating it as `parseValue` would; throws at the first byte
    /// that makes the text not canonical.
    private mutating func scanValue() throws(JSONError) {
        guard pos < count else { throw .endOfInput(at: pos) }
        switch buf[pos] {
        case UInt8(ascii: "{"):
            var none: [MemberRanges] = []
            try scanObject(collecting: &none, top: false)
        case UInt8(ascii: "["):
            try scanArray()
        case UInt8(ascii: "\""):
            _ = try scanString()
        case UInt8(ascii: "t"):
            try expectLiteral("true")
        case UInt8(ascii: "f"):
            try expectLiteral("false")
        case UInt8(ascii: "n"):
            try expectLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try parseNumber()
            guard canonical else { throw Self.notCanonical }
        case let b:
            throw .unexpected(b, at: pos, expected: "a JSON value")
        }
    }

    /// Skips a string without escapes (an escape is never canonical here); returns the
    /// range of its contents and whether they are all ASCII.
    private mutating func scanString() throws(JSONError) -> (range: Range<Int>, ascii: Bool) {
        let start = pos
        pos += 1
        var ascii = true
        while true {
            pos = skipPlainASCII(from: pos)
            guard pos < count else { throw .make("unterminated string starting", at: start) }
            let b = buf[pos]
            if b == UInt8(ascii: "\"") {
                pos += 1
                return ((start + 1)..<(pos - 1), ascii)
            }
            if b == UInt8(ascii: "\\") || b < 0x20 { throw Self.notCanonical }
            ascii = false
            try skipUTF8Sequence(lead: b)
        }
    }

    /// Skips an object whose keys are ASCII and strictly increasing, with no
    /// whitespace; with `top`, records each member's ranges.
    private mutating func scanObject(collecting members: inout [MemberRanges], top: Bool) throws(JSONError) {
        if try scanOpening(closing: UInt8(ascii: "}")) { return }
        var previousKey: Range<Int>? = nil
        while true {
            guard pos < count, buf[pos] == UInt8(ascii: "\"") else { throw Self.notCanonical }
            let (key, ascii) = try scanString()
            guard ascii else { throw Self.notCanonical }
            if let previousKey, !CanonicalJSONWriter.bytesPrecede(
                UnsafeBufferPointer(rebasing: buf[previousKey]), UnsafeBufferPointer(rebasing: buf[key])) {
                throw Self.notCanonical
            }
            previousKey = key
            guard pos < count, buf[pos] == UInt8(ascii: ":") else { throw Self.notCanonical }
            pos += 1
            let valueStart = pos
            try scanValue()
            if top { members.append(MemberRanges(key: key, value: valueStart..<pos)) }
            if try scanSeparator(closing: UInt8(ascii: "}")) { return }
        }
    }

    /// Skips an array with no whitespace.
    private mutating func scanArray() throws(JSONError) {
        if try scanOpening(closing: UInt8(ascii: "]")) { return }
        while true {
            try scanValue()
            if try scanSeparator(closing: UInt8(ascii: "]")) { return }
        }
    }

    /// Enters a container (its opening byte at `pos`); true when it is empty, and then
    /// already left past its closing byte.
    private mutating func scanOpening(closing: UInt8) throws(JSONError) -> Bool {
        try enterContainer()
        guard pos < count else { throw .endOfInput(at: pos) }
        guard buf[pos] == closing else { return false }
        pos += 1
        depth -= 1
        return true
    }

    /// After a member or element: moves past a comma (false) or the container's
    /// closing byte (true, leaving the container).
    private mutating func scanSeparator(closing: UInt8) throws(JSONError) -> Bool {
        guard pos < count else { throw .endOfInput(at: pos) }
        let b = buf[pos]
        pos += 1
        if b == UInt8(ascii: ",") { return false }
        guard b == closing else { throw Self.notCanonical }
        depth -= 1
        return true
    }
}
