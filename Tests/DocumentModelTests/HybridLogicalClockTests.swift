import Testing
import TestSupport

@testable import DocumentModel

/// `HybridLogicalClock`: monotonic whatever the wall clock does, peers' times observed
/// within the skew bound (couchbase-lite-core's HybridClock.cc is the model).
@Suite struct HybridLogicalClockTests {
    static let second: UInt64 = 1_000_000_000
    static let start: UInt64 = 0x1800_0000_0000_0000

    @Test func wallTimeWithCounterZeroed() {
        var clock = HybridLogicalClock()
        #expect(clock.now(wall: Self.start + 0x1234) == Self.start)
        #expect(clock.now(wall: Self.start + 0x1234) == Self.start + 1)
        #expect(clock.now(wall: Self.start + 0x10000) == Self.start + 0x10000)
        #expect(clock.last == Self.start + 0x10000)
    }

    @Test func neverGoesBackwards() {
        var rng = SplitMix64(seed: 3)
        var clock = HybridLogicalClock()
        var wall = Self.start
        var previous: UInt64 = 0
        for _ in 0..<5000 {
            // The wall clock mostly advances, sometimes jumps back by up to a minute.
            if rng.chance(0.1) { wall -= UInt64(rng.int(0...60)) * Self.second } else { wall += UInt64(rng.int(0...100_000)) }
            let t = clock.now(wall: wall)!
            #expect(t > previous)
            previous = t
        }
        // A restart from the stored state keeps going up.
        var restarted = HybridLogicalClock(last: clock.last)
        #expect(restarted.now(wall: Self.start - 3600 * Self.second)! > previous)
    }

    @Test func floorFromTheDocument() {
        var clock = HybridLogicalClock()
        let stored = Self.start + 500 * Self.second   // this node's time in the vector, from before a state loss
        #expect(clock.now(wall: Self.start, after: stored) == stored + 1)
        #expect(clock.now(wall: Self.start) == stored + 2)
        var exhausted = HybridLogicalClock()
        #expect(exhausted.now(wall: Self.start, after: HybridLogicalClock.maxValidTime) == nil)
        #expect(exhausted.now(wall: Self.start, after: .max) == nil)
        #expect(exhausted.last == 0)
    }

    @Test func observingAPeer() {
        var clock = HybridLogicalClock()
        let peer = Self.start + 30 * Self.second + 7
        #expect(clock.observe(peer, wall: Self.start) == .accepted)
        #expect(clock.now(wall: Self.start)! == peer + 1)
        // An older time changes nothing.
        #expect(clock.observe(Self.start, wall: Self.start) == .accepted)
        #expect(clock.last == peer + 1)
    }

    @Test func aPeerFarAheadMovesTheClockOnlyToTheBound() {
        var clock = HybridLogicalClock()
        let bound = Self.start + HybridLogicalClock.maxSkew
        #expect(clock.observe(bound, wall: Self.start) == .accepted)
        #expect(clock.observe(bound + 3600 * Self.second, wall: Self.start) == .clamped(excess: 3600 * Self.second))
        #expect(clock.last == bound)
        #expect(clock.now(wall: Self.start) == bound + 1)
        // The bound moves with the wall clock.
        #expect(clock.observe(bound + 3600 * Self.second, wall: Self.start + 3600 * Self.second) == .accepted)
    }

    @Test func invalidTimesAreIgnored() throws {
        var clock = HybridLogicalClock(last: Self.start)
        #expect(clock.observe(HybridLogicalClock.minValidTime - 1, wall: Self.start) == .invalid)
        #expect(clock.observe(HybridLogicalClock.maxValidTime + 1, wall: Self.start) == .invalid)
        #expect(clock.last == Self.start)
        // A vector: legacy versions are not clock times; the worst observation is reported.
        let source = "AliceAliceAliceAliceAA"
        let v = try VersionVector(parsing: "\(String(Self.start + 7200 * Self.second, radix: 16))@\(source); 1@BobBobBobBobBobBobBobA, 1000000abcd@Revision+Tree+Encoding")
        #expect(clock.observe(v, wall: Self.start) == .invalid)
        let w = try VersionVector(parsing: "\(String(Self.start + 7200 * Self.second, radix: 16))@\(source); 1000000abcd@Revision+Tree+Encoding")
        #expect(clock.observe(w, wall: Self.start) == .clamped(excess: 7200 * Self.second - HybridLogicalClock.maxSkew))
    }
}
