// The `lww:<field>` policy: ranking the live leaves by one property.

extension ConflictResolver {
    /// The index in `bodies` (best first in winner order) of the body whose
    /// `field` ranks highest; ties go to the lowest index (winner order).
    ///
    /// Ranking of a top-level `field` value, lowest first:
    /// 1. absent, or not a number and not a string (`null`, booleans, arrays,
    ///    objects, NaN): all rank equal, below everything else;
    /// 2. numbers, compared by exact numeric value (`.int(1)` ties `.double(1.0)`;
    ///    integers beyond 2^53 are not rounded);
    /// 3. strings, compared by their UTF-8 bytes, which orders ISO-8601
    ///    timestamps of the same format and zone (e.g. `2024-05-01T10:00:00Z`)
    ///    chronologically. Any string ranks above any number: as in CouchDB's
    ///    collation, numbers sort before strings.
    public static func lastWriteWinner(field: String, bodies: [[String: JSON]]) -> Int {
        precondition(!bodies.isEmpty, "lww needs at least one body")
        var best = 0
        for i in bodies.indices.dropFirst() where lwwRanksAbove(bodies[i][field], bodies[best][field]) {
            best = i
        }
        return best
    }

    /// Whether `a` ranks strictly above `b` for `lww` (see `lastWriteWinner`).
    static func lwwRanksAbove(_ a: JSON?, _ b: JSON?) -> Bool {
        let (ta, tb) = (lwwTier(a), lwwTier(b))
        if ta != tb { return ta > tb }
        switch (a, b) {
        case let (.string(x)?, .string(y)?):
            return CanonicalJSONWriter.utf8Precedes(y, x)
        case let (x?, y?) where ta == 1:
            return numberPrecedes(y, x)
        default:
            return false
        }
    }

    /// 0: no usable value; 1: a number; 2: a string.
    static func lwwTier(_ value: JSON?) -> Int {
        switch value {
        case .string?: return 2
        case .int?: return 1
        case .double(let d)?: return d.isNaN ? 0 : 1
        default: return 0
        }
    }

    /// Exact numeric order of two JSON numbers (neither NaN).
    static func numberPrecedes(_ a: JSON, _ b: JSON) -> Bool {
        switch (a, b) {
        case let (.int(x), .int(y)): return x < y
        case let (.double(x), .double(y)): return x < y
        case let (.int(x), .double(y)): return intPrecedesDouble(x, y)
        case let (.double(x), .int(y)): return doublePrecedesInt(x, y)
        default: return false
        }
    }

    /// 2^63 as a Double: the first Double above every Int64.
    private static let twoTo63 = 9_223_372_036_854_775_808.0

    /// `Double(i) < d` without rounding `i`.
    static func intPrecedesDouble(_ i: Int64, _ d: Double) -> Bool {
        if d >= twoTo63 { return true }
        if d < -twoTo63 { return false }
        let t = d.rounded(.down)   // exact, within Int64's range
        let floor = Int64(t)
        // i < d  ⟺  i < ⌈d⌉ for non-integral d, i < d for integral d.
        return t == d ? i < floor : i <= floor
    }

    /// `d < Double(i)` without rounding `i`.
    static func doublePrecedesInt(_ d: Double, _ i: Int64) -> Bool {
        if d >= twoTo63 { return false }
        if d < -twoTo63 { return true }
        let t = d.rounded(.down)
        let floor = Int64(t)
        // d < i  ⟺  ⌊d⌋ < i.
        return floor < i
    }
}
