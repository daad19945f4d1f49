import DocumentModel
import Foundation

/// CouchDB's view collation, as a total order on JSON values and as byte strings that
/// sort the same way under `memcmp` (so SQLite can order and range-scan view keys).
///
/// `ViewCollation` owns the order of view keys: `null` < `false` < `true` < numbers <
/// strings < arrays < objects. Numbers compare by value (`1 == 1.0`); arrays element by
/// element, a shorter array first when it is a prefix of the other; objects member by
/// member (key, then value) in Shoal's canonical member order (keys sorted by UTF-8
/// bytes: Shoal's `JSON` does not keep the order members were written in), fewer members
/// first on a tie. Strings approximate ICU's root collation (see docs/queries.md):
///
/// 1. the string folded case- and accent-insensitively (NFC, then Foundation's
///    `.caseInsensitive, .diacriticInsensitive` folding), compared by code points;
/// 2. on a tie, the NFC string with the case of every letter swapped, compared by code
///    points — so `"a" < "A"` (ICU puts lower case first) and `"e" < "é"`.
///
/// Pure: no I/O, deterministic on every node.
public enum ViewCollation {
    enum Tag: UInt8 {
        case end = 0x00, null = 0x01, `false` = 0x02, `true` = 0x03, number = 0x04, string = 0x05
        case array = 0x06, object = 0x07
    }

    /// Compares two keys in collation order.
    public static func compare(_ a: JSON, _ b: JSON) -> ComparisonResult {
        compare(sortKey(a), sortKey(b))
    }

    /// Whether `a` sorts before `b`.
    public static func less(_ a: JSON, _ b: JSON) -> Bool { compare(a, b) == .orderedAscending }

    /// Compares two sort keys byte by byte (shorter first on a common prefix).
    public static func compare(_ a: [UInt8], _ b: [UInt8]) -> ComparisonResult {
        let count = min(a.count, b.count)
        for i in 0..<count where a[i] != b[i] {
            return a[i] < b[i] ? .orderedAscending : .orderedDescending
        }
        if a.count == b.count { return .orderedSame }
        return a.count < b.count ? .orderedAscending : .orderedDescending
    }

    /// The byte string of `value` whose byte order is the collation order. Two keys the
    /// collation calls equal (`1` and `1.0`) have the same sort key.
    public static func sortKey(_ value: JSON) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16)
        append(value, to: &out)
        return out
    }

    /// The sort key of an array's first `count` elements without the closing byte: every
    /// array key that starts with those elements has a sort key starting with it.
    static func arrayPrefix(_ elements: ArraySlice<JSON>) -> [UInt8] {
        var out: [UInt8] = [Tag.array.rawValue]
        for element in elements { append(element, to: &out) }
        return out
    }

    static func append(_ value: JSON, to out: inout [UInt8]) {
        switch value {
        case .null:
            out.append(Tag.null.rawValue)
        case .bool(let flag):
            out.append(flag ? Tag.true.rawValue : Tag.false.rawValue)
        case .int(let n):
            out.append(Tag.number.rawValue)
            appendNumber(Double(n), to: &out)
        case .double(let d):
            out.append(Tag.number.rawValue)
            appendNumber(d.isNaN ? 0 : d, to: &out)
        case .string(let s):
            out.append(Tag.string.rawValue)
            appendString(s, to: &out)
        case .array(let items):
            out.append(Tag.array.rawValue)
            for item in items { append(item, to: &out) }
            out.append(Tag.end.rawValue)
        case .object(let members):
            out.append(Tag.object.rawValue)
            for key in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                out.append(Tag.string.rawValue)
                appendString(key, to: &out)
                append(members[key]!, to: &out)
            }
            out.append(Tag.end.rawValue)
        }
    }

    /// 8 bytes, big-endian, sign-flipped so that byte order is numeric order (`-0 == 0`).
    static func appendNumber(_ d: Double, to out: inout [UInt8]) {
        let value = d == 0 ? 0.0 : d
        var bits = value.bitPattern
        bits = (bits & (1 << 63)) != 0 ? ~bits : bits | (1 << 63)
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }

    /// Level 1 (folded), then level 2 (case swapped), each escaped and ended by 0x00.
    static func appendString(_ s: String, to out: inout [UInt8]) {
        let nfc = s.precomposedStringWithCanonicalMapping
        appendEscaped(primary(nfc).utf8, to: &out)
        appendEscaped(caseSwapped(nfc).utf8, to: &out)
    }

    /// The case- and accent-folded form (level 1).
    static func primary(_ nfc: String) -> String {
        if nfc.utf8.allSatisfy({ $0 < 0x80 }) { return nfc.lowercased() }
        return nfc.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .precomposedStringWithCanonicalMapping
    }

    /// Every upper-case scalar lowered and every lower-case one raised (level 2).
    static func caseSwapped(_ nfc: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in nfc.unicodeScalars {
            let properties = scalar.properties
            let mapped: String
            if properties.isUppercase {
                mapped = properties.lowercaseMapping
            } else if properties.isLowercase {
                mapped = properties.uppercaseMapping
            } else {
                result.append(scalar)
                continue
            }
            // Only one-to-one mappings (ß → SS would break the order's consistency).
            if mapped.unicodeScalars.count == 1 { result.append(mapped.unicodeScalars.first!) } else { result.append(scalar) }
        }
        return String(result)
    }

    /// Bytes 0x00 and 0x01 are escaped as 0x01 0x01 / 0x01 0x02, and 0x00 ends the part,
    /// so a shorter string (a prefix) sorts first and no part runs into the next.
    static func appendEscaped(_ bytes: String.UTF8View, to out: inout [UInt8]) {
        for byte in bytes {
            if byte <= 1 {
                out.append(1)
                out.append(byte + 1)
            } else {
                out.append(byte)
            }
        }
        out.append(0)
    }
}
