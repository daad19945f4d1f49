// Number output: exact integers and ECMAScript-style shortest round-trip doubles.

extension CanonicalJSONWriter {
    /// Appends the decimal digits of `value`.
    mutating func writeInt(_ value: Int64) {
        if value >= 0 && value < 10 {
            append(0x30 &+ UInt8(truncatingIfNeeded: value))
            return
        }
        if value < 0 { append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var i = 20
            repeat {
                i -= 1
                let (q, r) = magnitude.quotientAndRemainder(dividingBy: 10)
                digits[i] = 0x30 &+ UInt8(truncatingIfNeeded: r)
                magnitude = q
            } while magnitude != 0
            append(UnsafeBufferPointer(rebasing: digits[i..<20]))
        }
    }

    /// True when the canonical form of `number` (an `.int` or `.double`) is exactly `text`.
    static func writesNumber(_ number: JSON, as text: UnsafeBufferPointer<UInt8>) -> Bool {
        var writer = CanonicalJSONWriter(capacity: 64)
        switch number {
        case .int(let i): writer.writeInt(i)
        case .double(let d): writer.writeDouble(d)
        default: return false
        }
        return writer.count == text.count && writer.withBytes { $0.elementsEqual(text) }
    }

    /// Appends a double as documented on `CanonicalJSONWriter`.
    mutating func writeDouble(_ value: Double) {
        guard value.isFinite else {
            appendASCII("null")
            return
        }
        if let i = JSON.exactInt64(value) {
            writeInt(i)
            return
        }
        // Swift's description holds the shortest round-trip digits (e.g. "1.5e-07",
        // "0.001", "1e+300"); extract them and the decimal exponent, then lay
        // them out the ECMAScript way.
        var text = value.magnitude.description
        text.withUTF8 { desc in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: desc.count) { digits in
                var k = 0              // significant digits collected
                var pointAt = -1       // digits before the decimal point
                var exponent = 0
                var i = 0
                var leadingZeros = true
                var skippedLeadingZeros = 0
                while i < desc.count {
                    let c = desc[i]
                    if c == UInt8(ascii: ".") {
                        pointAt = k + skippedLeadingZeros
                    } else if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
                        exponent = CanonicalJSONWriter.parseExponent(desc, from: i + 1)
                        break
                    } else if c == UInt8(ascii: "0") && leadingZeros {
                        skippedLeadingZeros += 1
                    } else {
                        leadingZeros = false
                        digits[k] = c
                        k += 1
                    }
                    i += 1
                }
                let totalMantissaDigits = k + skippedLeadingZeros
                if pointAt < 0 { pointAt = totalMantissaDigits }
                while k > 1 && digits[k - 1] == UInt8(ascii: "0") { k -= 1 }
                // value = 0.d1...dk × 10^n
                let n = exponent + pointAt - skippedLeadingZeros
                if value < 0 { append(UInt8(ascii: "-")) }
                layOut(UnsafeBufferPointer(rebasing: digits[0..<k]), n: n)
            }
        }
    }

    /// The signed decimal exponent written after an 'e'.
    static func parseExponent(_ desc: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start
        var negative = false
        if i < desc.count && (desc[i] == UInt8(ascii: "-") || desc[i] == UInt8(ascii: "+")) {
            negative = desc[i] == UInt8(ascii: "-")
            i += 1
        }
        var e = 0
        while i < desc.count {
            e = e * 10 + Int(desc[i] &- 0x30)
            i += 1
        }
        return negative ? -e : e
    }

    /// ECMAScript Number::toString layout of digits d1...dk with value 0.d1...dk × 10^n.
    mutating func layOut(_ digits: UnsafeBufferPointer<UInt8>, n: Int) {
        let k = digits.count
        if k <= n && n <= 21 {
            append(digits)
            for _ in 0..<(n - k) { append(UInt8(ascii: "0")) }
        } else if 0 < n && n <= 21 {
            append(UnsafeBufferPointer(rebasing: digits[0..<n]))
            append(UInt8(ascii: "."))
            append(UnsafeBufferPointer(rebasing: digits[n..<k]))
        } else if -6 < n && n <= 0 {
            append(UInt8(ascii: "0"))
            append(UInt8(ascii: "."))
            for _ in 0..<(-n) { append(UInt8(ascii: "0")) }
            append(digits)
        } else {
            append(digits[0])
            if k > 1 {
                append(UInt8(ascii: "."))
                append(UnsafeBufferPointer(rebasing: digits[1..<k]))
            }
            append(UInt8(ascii: "e"))
            let e = n - 1
            append(e < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            writeInt(Int64(e.magnitude))
        }
    }
}
