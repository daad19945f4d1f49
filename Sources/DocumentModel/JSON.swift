/// A JSON value: the in-memory form of every document body and protocol payload.
///
/// Numbers come in two cases. `.int` holds integers; `.double` holds everything
/// else. The two cases compare and hash by numeric value, so `.int(1)` equals
/// `.double(1.0)`, and both encode to the same canonical bytes (`1`).
/// Strings (and object keys) compare by their UTF-8 bytes, not by Unicode
/// canonical equivalence, so two values are equal exactly when their canonical
/// encodings are equal. One limit comes from `[String: JSON]` itself: an object
/// cannot hold two keys that are canonically equivalent (e.g. precomposed and
/// decomposed "é"); when parsing, the later one replaces the earlier one.
public enum JSON: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])
}

// MARK: - Number normalization

extension JSON {
    /// 2^53: the largest magnitude up to which every integer is a `Double`.
    static let maxSafeInteger: Double = 9_007_199_254_740_992

    /// A number, normalized like the parser does: an integral value with
    /// magnitude ≤ 2^53 becomes `.int` (`-0.0` becomes `.int(0)`), anything else
    /// stays `.double` (including NaN and infinities, which encode as `null`).
    public static func number(_ d: Double) -> JSON {
        if d.magnitude <= maxSafeInteger, d == d.rounded(.towardZero) {
            return .int(Int64(d))
        }
        return .double(d)
    }

    /// The `Int64` equal to `d`, if `d` is integral and within `Int64`'s range.
    @inline(__always)
    static func exactInt64(_ d: Double) -> Int64? {
        // -2^63 ... 2^63 (exclusive); Double(Int64.max) rounds up to 2^63.
        guard d >= -9_223_372_036_854_775_808.0, d < 9_223_372_036_854_775_808.0,
              d == d.rounded(.towardZero) else { return nil }
        return Int64(d)
    }
}

// MARK: - Equatable & Hashable

extension JSON: Equatable {
    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null):
            return true
        case let (.bool(a), .bool(b)):
            return a == b
        case let (.int(a), .int(b)):
            return a == b
        case let (.double(a), .double(b)):
            return a == b || (a.isNaN && b.isNaN)
        case let (.int(a), .double(b)), let (.double(b), .int(a)):
            return exactInt64(b) == a
        case let (.string(a), .string(b)):
            return a.utf8.elementsEqual(b.utf8)
        case let (.array(a), .array(b)):
            return a == b
        case let (.object(a), .object(b)):
            return objectsEqual(a, b)
        default:
            return false
        }
    }

    private static func objectsEqual(_ a: [String: JSON], _ b: [String: JSON]) -> Bool {
        guard a.count == b.count else { return false }
        for (key, value) in a {
            guard let i = b.index(forKey: key) else { return false }
            let other = b[i]
            guard other.value == value, other.key.utf8.elementsEqual(key.utf8) else { return false }
        }
        return true
    }
}

extension JSON: Hashable {
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .bool(let b):
            hasher.combine(1 as UInt8)
            hasher.combine(b)
        case .int(let i):
            hasher.combine(2 as UInt8)
            hasher.combine(i)
        case .double(let d):
            if let i = JSON.exactInt64(d) {
                hasher.combine(2 as UInt8)
                hasher.combine(i)
            } else {
                hasher.combine(3 as UInt8)
                hasher.combine(d.isNaN ? Double.nan.bitPattern : d.bitPattern)
            }
        case .string(let s):
            hasher.combine(4 as UInt8)
            hasher.combine(s)
        case .array(let a):
            hasher.combine(5 as UInt8)
            hasher.combine(a.count)
            for element in a { element.hash(into: &hasher) }
        case .object(let o):
            hasher.combine(6 as UInt8)
            hasher.combine(o.count)
            // Order-independent: combine per-entry hashes commutatively.
            var mix = 0
            for (key, value) in o {
                var entry = Hasher()
                entry.combine(key)
                value.hash(into: &entry)
                mix ^= entry.finalize()
            }
            hasher.combine(mix)
        }
    }
}
