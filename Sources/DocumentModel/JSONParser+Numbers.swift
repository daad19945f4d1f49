// Number parsing: strict RFC 8259 grammar, exact Int64 integers, correctly rounded doubles.

extension JSONParser {
    /// Exact powers of ten representable as `Double` (10^0 ... 10^22).
    static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    @inline(__always)
    static func isDigit(_ b: UInt8) -> Bool { b &- 0x30 < 10 }

    /// Parses a number; `pos` is at '-' or a digit.
    mutating func parseNumber() throws(JSONError) -> JSON {
        let start = pos
        let negative = buf[pos] == UInt8(ascii: "-")
        if negative { pos += 1 }
        guard pos < count else { throw .endOfInput(at: pos) }
        let intStart = pos
        let first = buf[pos]
        if first == UInt8(ascii: "0") {
            pos += 1
            if pos < count && JSONParser.isDigit(buf[pos]) {
                throw .make("leading zero in number", at: intStart)
            }
        } else if JSONParser.isDigit(first) {
            pos += 1
            while pos < count && JSONParser.isDigit(buf[pos]) { pos += 1 }
        } else {
            throw .unexpected(first, at: pos, expected: "a digit")
        }
        let intEnd = pos
        var fracStart = pos
        var fracEnd = pos
        var exponent = 0
        var isInteger = true

        if pos < count && buf[pos] == UInt8(ascii: ".") {
            isInteger = false
            pos += 1
            fracStart = pos
            try expectDigit(after: "decimal point")
            while pos < count && JSONParser.isDigit(buf[pos]) { pos += 1 }
            fracEnd = pos
        }
        if pos < count && buf[pos] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            pos += 1
            var expNegative = false
            if pos < count && (buf[pos] == UInt8(ascii: "+") || buf[pos] == UInt8(ascii: "-")) {
                expNegative = buf[pos] == UInt8(ascii: "-")
                pos += 1
            }
            try expectDigit(after: "exponent")
            while pos < count && JSONParser.isDigit(buf[pos]) {
                if exponent < 100_000 { exponent = exponent * 10 + Int(buf[pos] &- 0x30) }
                pos += 1
            }
            if expNegative { exponent = -exponent }
        }

        if isInteger, let value = integerValue(from: intStart, to: intEnd, negative: negative) {
            if negative && value == 0 { canonical = false }  // written as 0
            return .int(value)
        }
        let d = fastDouble(intStart: intStart, intEnd: intEnd, fracStart: fracStart, fracEnd: fracEnd,
                           exponent: exponent, negative: negative) ?? slowDouble(from: start)
        guard let d, d.isFinite else {
            throw .make("number out of range", at: start)
        }
        let value = JSON.number(d)
        if canonical && !CanonicalJSONWriter.writesNumber(value, as: UnsafeBufferPointer(rebasing: buf[start..<pos])) {
            canonical = false
        }
        return value
    }

    @inline(__always)
    mutating func expectDigit(after what: String) throws(JSONError) {
        guard pos < count else { throw .endOfInput(at: pos) }
        guard JSONParser.isDigit(buf[pos]) else {
            throw .unexpected(buf[pos], at: pos, expected: "a digit after the \(what)")
        }
    }

    /// The exact value of an integer literal, or nil when it does not fit `Int64`.
    func integerValue(from intStart: Int, to intEnd: Int, negative: Bool) -> Int64? {
        let digits = intEnd - intStart
        if digits <= 18 {
            var v: Int64 = 0
            for i in intStart..<intEnd { v = v &* 10 &+ Int64(buf[i] &- 0x30) }
            return negative ? -v : v
        }
        // Accumulate negatively so that Int64.min is reachable.
        var v: Int64 = 0
        for i in intStart..<intEnd {
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.subtractingReportingOverflow(Int64(buf[i] &- 0x30))
            if o1 || o2 { return nil }
            v = s
        }
        if negative { return v }
        return v == .min ? nil : -v
    }

    /// Clinger's fast path: exact when the significand fits 2^53 and |exponent| ≤ 22.
    func fastDouble(intStart: Int, intEnd: Int, fracStart: Int, fracEnd: Int,
                    exponent: Int, negative: Bool) -> Double? {
        let digitCount = (intEnd - intStart) + (fracEnd - fracStart)
        guard digitCount <= 15 else { return nil }
        var significand: Int64 = 0
        for i in intStart..<intEnd { significand = significand &* 10 &+ Int64(buf[i] &- 0x30) }
        for i in fracStart..<fracEnd { significand = significand &* 10 &+ Int64(buf[i] &- 0x30) }
        let e = exponent - (fracEnd - fracStart)
        var d = Double(significand)
        if significand == 0 {
            d = 0
        } else if e >= 0 && e <= 22 {
            d *= JSONParser.exactPowersOfTen[e]
        } else if e < 0 && e >= -22 {
            d /= JSONParser.exactPowersOfTen[-e]
        } else {
            return nil
        }
        return negative ? -d : d
    }

    /// Correctly rounded conversion by the standard library (locale-independent).
    func slowDouble(from start: Int) -> Double? {
        let text = String(decoding: UnsafeBufferPointer(rebasing: buf[start..<pos]), as: UTF8.self)
        return Double(text)
    }
}
