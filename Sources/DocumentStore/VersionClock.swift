#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentModel
import GRDB
import Synchronization

/// One database's version-vector identity and clock (docs/storage.md "Versions"): owns
/// its `SourceID` (made once, kept in the `info` table under `source`), the
/// `HybridLogicalClock` that times its local edits (its `last` kept in the `meta` table
/// under `hlc`, written by each transaction that moved it) and the wall clock the
/// hybrid clock is fed (the system's real-time clock unless a test or the lab sets
/// another). Shared by the database's named collections.
final class VersionClock: Sendable {
    /// The source of every version this database mints.
    let source: SourceID
    /// `source` in its text form (the local edit's stored vector is built from it).
    let sourceText: String
    private let state: Mutex<(clock: HybridLogicalClock, persisted: UInt64)>
    /// A wall clock set in place of the system's. Held in a struct: a bare function
    /// type in the generic `Mutex` would be wrapped in one more reabstraction thunk on
    /// every read.
    private let wallOverride = Mutex<WallClock?>(nil)

    private struct WallClock {
        let now: @Sendable () -> UInt64
    }

    init(source: SourceID, last: UInt64) {
        self.source = source
        sourceText = source.base64
        state = Mutex((HybridLogicalClock(last: last), last))
    }

    /// Nanoseconds since 1970 from `CLOCK_REALTIME`.
    static func systemWallTime() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(max(0, now.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, now.tv_nsec))
    }

    /// Replaces the wall clock (tests, clock faults).
    func setWallClock(_ now: @escaping @Sendable () -> UInt64) {
        wallOverride.withLock { $0 = WallClock(now: now) }
    }

    /// The wall time now (ns since 1970).
    private func wallTime() -> UInt64 {
        wallOverride.withLock { $0 }?.now() ?? Self.systemWallTime()
    }

    /// The last time given out or observed.
    var last: UInt64 { state.withLock { $0.clock.last } }

    /// A new hybrid time for a local edit, past everything this clock gave out or saw
    /// and past `floor` (what the parent's vector holds for this source).
    func next(after floor: UInt64) throws(StoreError) -> UInt64 {
        let wall = wallTime()
        guard let time = state.withLock({ $0.clock.now(wall: wall, after: floor) }) else {
            throw StoreError(.storage, reason: "the hybrid logical clock has no valid time left")
        }
        return time
    }

    /// Moves the clock up to the times of a received vector (within the skew bound).
    @discardableResult
    func observe(_ vector: VersionVector) -> HybridLogicalClock.Observation {
        let wall = wallTime()
        return state.withLock { $0.clock.observe(vector, wall: wall) }
    }

    /// Inside a write transaction: saves the clock's `last` in the database's `meta`
    /// table when it moved since the last save (one small UPDATE per transaction that
    /// minted or observed a time; none otherwise).
    func persist(_ db: Database) throws {
        let pending: UInt64? = state.withLock { state in
            guard state.clock.last > state.persisted else { return nil }
            state.persisted = state.clock.last
            return state.clock.last
        }
        guard let pending else { return }
        try db.cachedStatement(sql: "UPDATE meta SET value = ? WHERE key = 'hlc'")
            .execute(arguments: [Int64(bitPattern: pending)])
    }

    /// The clock of the database open on `writer`: its source from the `info` table
    /// (written there now from `configured`, or from random bytes, when absent) and its
    /// last time from the `meta` table.
    static func load(_ writer: any DatabaseWriter, configured: SourceID?) throws -> VersionClock {
        try writer.write { db in
            var source = try String.fetchOne(db, sql: "SELECT value FROM info WHERE key = 'source'")
                .flatMap { SourceID(base64: $0) }
            if source == nil {
                let made = configured.flatMap { $0.isMe ? nil : $0 } ?? randomSource()
                try db.execute(sql: "INSERT OR REPLACE INTO info(key, value) VALUES ('source', ?)", arguments: [made.base64])
                source = made
            }
            let last = try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'hlc'") ?? 0
            return VersionClock(source: source!, last: UInt64(max(0, last)))
        }
    }

    /// A source ID of 16 random bytes (never the all-zero placeholder).
    static func randomSource() -> SourceID {
        var generator = SystemRandomNumberGenerator()
        let source = SourceID(high: generator.next(), low: generator.next())
        return source.isMe ? SourceID(high: 0, low: 1) : source
    }
}
