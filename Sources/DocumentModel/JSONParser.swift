/// A recursive-descent JSON parser over a UTF-8 byte buffer; owns the cursor,
/// the nesting depth and a scratch buffer for strings with escapes.
///
/// Recursion is bounded by `maxDepth`, so hostile input cannot overflow the stack.
struct JSONParser {
    /// Maximum number of nested arrays/objects.
    static let maxDepth = 512

    let buf: UnsafeBufferPointer<UInt8>
    let count: Int
    var pos = 0
    var depth = 0
    /// Reused for strings that contain escapes.
    var scratch: [UInt8] = []
    /// Keys of the objects being parsed, innermost last (reused, so that each
    /// dictionary and array is created once at its final size).
    var keyStack: [String] = []
    /// Values of the objects and elements of the arrays being parsed, innermost last.
    var valueStack: [JSON] = []
    /// Still true when everything read so far is exactly what `canonicalBytes()` writes
    /// for the parsed value: no whitespace, object keys in strictly increasing UTF-8
    /// byte order, no escapes in strings, numbers only as `Int64` integers other than
    /// `-0`. (Conservative: a canonical text with escapes or fractions reads as false.)
    var canonical = true

    init(_ buf: UnsafeBufferPointer<UInt8>) {
        self.buf = buf
        self.count = buf.count
    }

    /// Parses a complete document: one value, optionally surrounded by whitespace.
    static func parse(_ buf: UnsafeBufferPointer<UInt8>) throws(JSONError) -> JSON {
        try parseReportingCanonical(buf).value
    }

    /// Parses a complete document and tells whether its bytes are its canonical form.
    static func parseReportingCanonical(_ buf: UnsafeBufferPointer<UInt8>) throws(JSONError) -> (value: JSON, isCanonical: Bool) {
        var parser = JSONParser(buf)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        if parser.pos < parser.count {
            throw .make("trailing characters after JSON value", at: parser.pos)
        }
        return (value, parser.canonical)
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while pos < count {
            let b = buf[pos]
            guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
            canonical = false
            pos += 1
        }
    }

    mutating func parseValue() throws(JSONError) -> JSON {
        guard pos < count else { throw .endOfInput(at: pos) }
        switch buf[pos] {
        case UInt8(ascii: "{"):
            return try parseObject()
        case UInt8(ascii: "["):
            return try parseArray()
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        case let b:
            throw .unexpected(b, at: pos, expected: "a JSON value")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let bytes = literal.utf8Start
        for i in 0..<literal.utf8CodeUnitCount {
            guard pos < count else { throw .endOfInput(at: pos) }
            guard buf[pos] == bytes[i] else { throw .unexpected(buf[pos], at: pos, expected: "'\(literal)'") }
            pos += 1
        }
    }

    mutating func enterContainer() throws(JSONError) {
        depth += 1
        if depth > JSONParser.maxDepth {
            throw .make("nesting too deep (more than \(JSONParser.maxDepth) levels)", at: pos)
        }
        pos += 1
    }

    mutating func parseObject() throws(JSONError) -> JSON {
        try enterContainer()
        skipWhitespace()
        guard pos < count else { throw .endOfInput(at: pos) }
        if buf[pos] == UInt8(ascii: "}") {
            pos += 1
            depth -= 1
            return .object([:])
        }
        let keyBase = keyStack.count
        let valueBase = valueStack.count
        while true {
            guard pos < count else { throw .endOfInput(at: pos) }
            guard buf[pos] == UInt8(ascii: "\"") else {
                throw .unexpected(buf[pos], at: pos, expected: "a string key")
            }
            let key = try parseString()
            if canonical, keyStack.count > keyBase, !CanonicalJSONWriter.utf8Precedes(keyStack[keyStack.count - 1], key) {
                canonical = false  // unsorted or duplicate key
            }
            skipWhitespace()
            guard pos < count else { throw .endOfInput(at: pos) }
            guard buf[pos] == UInt8(ascii: ":") else {
                throw .unexpected(buf[pos], at: pos, expected: "':'")
            }
            pos += 1
            skipWhitespace()
            keyStack.append(key)
            valueStack.append(try parseValue())
            skipWhitespace()
            guard pos < count else { throw .endOfInput(at: pos) }
            switch buf[pos] {
            case UInt8(ascii: ","):
                pos += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                pos += 1
                depth -= 1
                let n = keyStack.count - keyBase
                var members = [String: JSON](minimumCapacity: n)
                for i in 0..<n {
                    members[keyStack[keyBase + i]] = valueStack[valueBase + i]   // duplicate keys: last wins
                }
                // Keys that differ in bytes but are equal as Strings (canonically
                // equivalent) became one member: re-encoding would not give these bytes.
                if members.count != n { canonical = false }
                keyStack.removeSubrange(keyBase...)
                valueStack.removeSubrange(valueBase...)
                return .object(members)
            case let b:
                throw .unexpected(b, at: pos, expected: "',' or '}'")
            }
        }
    }

    mutating func parseArray() throws(JSONError) -> JSON {
        try enterContainer()
        skipWhitespace()
        guard pos < count else { throw .endOfInput(at: pos) }
        if buf[pos] == UInt8(ascii: "]") {
            pos += 1
            depth -= 1
            return .array([])
        }
        let base = valueStack.count
        while true {
            valueStack.append(try parseValue())
            skipWhitespace()
            guard pos < count else { throw .endOfInput(at: pos) }
            switch buf[pos] {
            case UInt8(ascii: ","):
                pos += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                pos += 1
                depth -= 1
                let elements = Array(valueStack[base...])
                valueStack.removeSubrange(base...)
                return .array(elements)
            case let b:
                throw .unexpected(b, at: pos, expected: "',' or ']'")
            }
        }
    }
}
