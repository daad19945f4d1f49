/// A hybrid logical clock as a value (Kulkarni et al. 2014, as couchbase-lite-core's
/// `HybridClock` in LiteCore/Support/HybridClock.cc): owns the last time it gave out or
/// saw. It reads no clock: the caller passes the wall time (nanoseconds since 1970) and
/// stores `last` to restart from it.
///
/// A time is nanoseconds with the low 16 bits replaced by a counter. `now(wall:after:)`
/// returns the wall time with a zero counter when that is later than `last`, otherwise
/// `last + 1`, so it never goes backwards when the wall clock does. `observe(_:wall:)`
/// moves `last` up to a time received from a peer, but never further than
/// `maxSkew` (2 minutes, couchbase-lite-core's `kMaxClockSkew`) past the wall time: a
/// peer whose clock runs far ahead cannot drag this node's versions into its future.
/// Couchbase Lite refuses such a time; this clock is clamped instead and says so,
/// and the caller keeps the peer's version as it is (it is a value, not a clock).
public struct HybridLogicalClock: Sendable, Hashable {
    /// The last time given out or observed (0 before any).
    public private(set) var last: UInt64

    /// How far past the wall time an observed time may move the clock: 2 minutes in ns.
    public static let maxSkew: UInt64 = 120 * 1_000_000_000
    /// Bits of the logical counter below the wall time.
    public static let counterMask: UInt64 = 0xFFFF
    /// The smallest time accepted from a peer (couchbase-lite-core's `kMinValidTime`);
    /// the times of legacy versions start here (generation 1 is `1 << 40`).
    public static let minValidTime: UInt64 = 0x100_0000_0000
    /// The largest time accepted from a peer or given out (`kMaxValidTime`, year 2262).
    public static let maxValidTime: UInt64 = 0x7FFF_FFFF_FFFF_FFFF

    /// A clock that resumes after `last` (the stored state; 0 for a new node).
    public init(last: UInt64 = 0) {
        self.last = last
    }

    /// A new time, greater than every time given out or observed, and greater than
    /// `floor` (the time the document's vector already holds for this node's source, so
    /// per-source times only grow even if the stored clock state was lost). Nil when
    /// no valid time is left (`floor` or `last` at `maxValidTime`).
    public mutating func now(wall: UInt64, after floor: UInt64 = 0) -> UInt64? {
        let physical = min(wall, Self.maxValidTime) & ~Self.counterMask
        var next = physical > last ? physical : last &+ 1
        if next <= floor { next = floor &+ 1 }
        guard next != 0, next <= Self.maxValidTime, next > last, next > floor else { return nil }
        last = next
        return next
    }

    /// What `observe` did with a peer's time.
    public enum Observation: Sendable, Hashable {
        /// The clock now stands at or after the time.
        case accepted
        /// The time was more than `maxSkew` ahead of the wall time: the clock moved only
        /// to the bound; `excess` is how many ns further the peer's time lies.
        case clamped(excess: UInt64)
        /// The time is below `minValidTime` or above `maxValidTime`: ignored.
        case invalid
    }

    /// Moves the clock up to `time`, a time received from a peer, within the skew
    /// bound; never backwards.
    @discardableResult
    public mutating func observe(_ time: UInt64, wall: UInt64) -> Observation {
        guard time >= Self.minValidTime, time <= Self.maxValidTime else { return .invalid }
        let bound = min(wall, Self.maxValidTime - Self.maxSkew) + Self.maxSkew
        if time > bound {
            last = max(last, bound)
            return .clamped(excess: time - bound)
        }
        last = max(last, time)
        return .accepted
    }

    /// Observes every time in `vector`: the least favourable observation is returned
    /// (`.invalid` before `.clamped` before `.accepted`).
    @discardableResult
    public mutating func observe(_ vector: VersionVector, wall: UInt64) -> Observation {
        var result = Observation.accepted
        for version in vector.versions where !version.isLegacy {
            switch observe(version.time, wall: wall) {
            case .invalid: result = .invalid
            case .clamped(let excess):
                if case .clamped(let worst) = result { result = .clamped(excess: max(worst, excess)) }
                else if result == .accepted { result = .clamped(excess: excess) }
            case .accepted: break
            }
        }
        return result
    }
}
