import DocumentModel
import Foundation

extension ReduceFunction.Builtin {
    /// HyperLogLog registers kept by `_approx_count_distinct` (2^10: about 3% error).
    static let registerBits = 10

    func reduce(keys: [JSON], values: [JSON]) -> JSON {
        switch self {
        case .count:
            return .int(Int64(values.count))
        case .sum:
            return values.dropFirst().reduce(values.first ?? .int(0)) { Self.sum($0, $1) }
        case .stats:
            return rereduce(values.map(Self.stats))
        case .approxCountDistinct:
            var registers = [UInt8](repeating: 0, count: 1 << Self.registerBits)
            for key in keys { Self.add(key, to: &registers) }
            return .string(Digests.hex(registers))
        }
    }

    func rereduce(_ partials: [JSON]) -> JSON {
        switch self {
        case .count, .sum:
            return partials.dropFirst().reduce(partials.first ?? .int(0)) { Self.sum($0, $1) }
        case .stats:
            guard let first = partials.first else { return Self.stats(.int(0)) }
            return partials.dropFirst().reduce(first) { Self.mergeStats($0, $1) }
        case .approxCountDistinct:
            var registers = [UInt8](repeating: 0, count: 1 << Self.registerBits)
            for partial in partials {
                guard let hex = partial.stringValue, let bytes = Digests.bytes(fromHex: hex), bytes.count == registers.count
                else { continue }
                for i in registers.indices { registers[i] = max(registers[i], bytes[i]) }
            }
            return .string(Digests.hex(registers))
        }
    }

    static let sumError: JSON = [
        "error": "builtin_reduce_error",
        "reason": "The _sum function requires that map values be numbers or arrays of numbers",
    ]

    /// Numbers add; arrays add element by element (the shorter one padded with zeros).
    static func sum(_ a: JSON, _ b: JSON) -> JSON {
        switch (a, b) {
        case let (.int(x), .int(y)):
            let (result, overflow) = x.addingReportingOverflow(y)
            return overflow ? .double(Double(x) + Double(y)) : .int(result)
        case let (.array(x), .array(y)):
            return .array((0..<max(x.count, y.count)).map { i in
                sum(i < x.count ? x[i] : .int(0), i < y.count ? y[i] : .int(0))
            })
        case (.array(let x), _) where b.isNumber:
            return sum(.array(x), .array([b]))
        case (_, .array(let y)) where a.isNumber:
            return sum(.array([a]), .array(y))
        default:
            guard let x = a.doubleValue, let y = b.doubleValue, a.isNumber, b.isNumber else { return sumError }
            return .number(x + y)
        }
    }

    /// A value as `{sum, count, min, max, sumsqr}`: a number, or such an object already.
    static func stats(_ value: JSON) -> JSON {
        if case .object(let object) = value, object["count"] != nil, object["sum"] != nil { return value }
        guard value.isNumber, let x = value.doubleValue else {
            return ["error": "builtin_reduce_error", "reason": "The _stats function requires that map values be numbers"]
        }
        return ["sum": .number(x), "count": 1, "min": .number(x), "max": .number(x), "sumsqr": .number(x * x)]
    }

    static func mergeStats(_ a: JSON, _ b: JSON) -> JSON {
        guard case .object(let x) = a, case .object(let y) = b, x["error"] == nil else { return a }
        if y["error"] != nil { return b }
        func number(_ object: [String: JSON], _ key: String) -> Double { object[key]?.doubleValue ?? 0 }
        return [
            "sum": .number(number(x, "sum") + number(y, "sum")),
            "count": .number(number(x, "count") + number(y, "count")),
            "min": .number(min(number(x, "min"), number(y, "min"))),
            "max": .number(max(number(x, "max"), number(y, "max"))),
            "sumsqr": .number(number(x, "sumsqr") + number(y, "sumsqr")),
        ]
    }

    /// Adds a key to HyperLogLog registers (its hash: the first 8 bytes of the SHA-1 of
    /// its sort key, so `1` and `1.0` count once).
    static func add(_ key: JSON, to registers: inout [UInt8]) {
        let digest = SHA1.hash(ViewCollation.sortKey(key))
        var hash: UInt64 = 0
        for byte in digest.prefix(8) { hash = hash << 8 | UInt64(byte) }
        let index = Int(hash >> UInt64(64 - registerBits))
        let rest = hash << UInt64(registerBits)
        let rank = UInt8(min(rest.leadingZeroBitCount, 64 - registerBits) + 1)
        registers[index] = max(registers[index], rank)
    }

    /// The HyperLogLog estimate of stored registers (with the small-range correction).
    static func estimate(_ partial: JSON) -> JSON {
        guard let hex = partial.stringValue, let registers = Digests.bytes(fromHex: hex), !registers.isEmpty else {
            return partial
        }
        let m = Double(registers.count)
        let alpha = 0.7213 / (1 + 1.079 / m)
        let harmonic = registers.reduce(0.0) { $0 + 1 / Double(UInt64(1) << UInt64($1)) }
        var estimate = alpha * m * m / harmonic
        let zeros = Double(registers.filter { $0 == 0 }.count)
        if estimate <= 2.5 * m, zeros > 0 { estimate = m * (m / zeros).logarithm }
        return .int(Int64(estimate.rounded()))
    }
}

private extension Double {
    var logarithm: Double { Foundation.log(self) }
}
