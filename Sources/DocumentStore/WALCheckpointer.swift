import Dispatch
import GRDB
import GRDBSQLite
import Synchronization

/// Copies a store's WAL into its database file from a connection of its own, on a
/// background queue, so that the commit that crosses the threshold does not pay for it
/// (SQLite's automatic checkpoint runs inside that commit, on the writer's thread, and
/// made every few `_bulk_docs` requests wait for a copy of 32 MB and an fsync).
///
/// It replaces the writer's automatic checkpoint with a WAL hook. After a commit, a WAL
/// of `threshold` frames or more schedules a `PASSIVE` checkpoint here (it waits for
/// neither readers nor the writer). Once it is done, the writer's next commit copies
/// the few frames committed meanwhile itself (SQLite starts the WAL over only when every
/// frame is in the database, and background copies alone would chase a moving end,
/// copying the same hot pages again and again). A WAL that still reaches `backstop`
/// frames (readers holding it back) is checkpointed by the writer at once, so the WAL
/// stays bounded. Durability is unchanged: a commit is durable in the WAL; a
/// checkpoint only moves pages.
final class WALCheckpointer: Sendable {
    private struct State {
        var connection: DatabaseQueue?
        var phase = CheckpointPhase()
        var closed = false
        var runs = 0
    }

    private let state = Mutex(State())
    private let path: String
    private let configuration: Configuration
    let threshold: Int32
    let backstop: Int32

    /// One queue for the checkpoints of every store of the process: they are disk work,
    /// and one at a time keeps them from competing with each other.
    private static let queue = DispatchQueue(label: "shoal.checkpoint", qos: .utility)

    /// For the file at `path`, whose connections use `configuration`.
    init(path: String, configuration: Configuration, threshold: Int32, backstop: Int32) {
        var own = configuration
        own.label = (configuration.label ?? "shoal") + ".checkpoint"
        self.path = path
        self.configuration = own
        self.threshold = threshold
        self.backstop = backstop
    }

    /// Takes over the automatic checkpoint of `db` (the writer connection). The writer
    /// must be closed before this checkpointer goes away (the hook does not retain it).
    func install(on db: Database) {
        sqlite3_wal_hook(db.sqliteConnection, walHook, Unmanaged.passUnretained(self).toOpaque())
    }

    /// What the hook does after a commit left `frames` frames in the WAL; true when the
    /// writer must checkpoint now (the backstop).
    func committed(frames: Int32) -> Bool {
        let action = state.withLock { state -> CheckpointPhase.Action in
            guard !state.closed else { return frames >= backstop ? .checkpointHere : .none }
            return state.phase.committed(frames: frames, threshold: threshold, backstop: backstop)
        }
        switch action {
        case .none: return false
        case .checkpointHere: return true
        case .schedule:
            Self.queue.async { self.run() }
            return false
        }
    }

    /// How many background checkpoints have run.
    var runs: Int { state.withLock { $0.runs } }

    private func run() {
        let connection: DatabaseQueue? = state.withLock { state in
            guard !state.closed else { return nil }
            if state.connection == nil { state.connection = try? DatabaseQueue(path: path, configuration: configuration) }
            return state.connection
        }
        // A checkpoint that fails (busy, or the connection did not open) is left to the
        // next commit's hook or to the writer's backstop.
        if let connection {
            try? connection.writeWithoutTransaction { db in _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)") }
        }
        state.withLock { state in
            state.phase.backgroundDone()
            state.runs += 1
        }
    }

    /// Stops scheduling, waits for a running checkpoint and closes the connection.
    func close() {
        state.withLock { $0.closed = true }
        Self.queue.sync {}
        let connection = state.withLock { state in
            defer { state.connection = nil }
            return state.connection
        }
        try? connection?.close()
    }
}

/// The writer's WAL hook (`sqlite3_wal_hook`): hands the frame count to the store's
/// checkpointer; at the backstop, checkpoints on the writer as SQLite's own hook does.
private func walHook(context: UnsafeMutableRawPointer?, db: OpaquePointer?, name: UnsafePointer<CChar>?, frames: Int32) -> Int32 {
    guard let context else { return SQLITE_OK }
    let checkpointer = Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue()
    if checkpointer.committed(frames: frames) {
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    }
    return SQLITE_OK
}

/// When a store's WAL is checkpointed, and by whom (pure logic of `WALCheckpointer`).
struct CheckpointPhase: Equatable {
    enum Action: Equatable {
        case none
        /// Start a background checkpoint.
        case schedule
        /// The writer checkpoints now, in its commit.
        case checkpointHere
    }

    enum Step: Equatable {
        /// Below the threshold, or a new WAL.
        case idle
        /// A background checkpoint is queued or running.
        case background
        /// It finished: the writer copies what was committed meanwhile.
        case tail
    }

    private(set) var step = Step.idle

    /// A commit left `frames` frames in the WAL.
    mutating func committed(frames: Int32, threshold: Int32, backstop: Int32) -> Action {
        switch step {
        case .idle:
            if frames >= backstop { return .checkpointHere }
            guard frames >= threshold else { return .none }
            step = .background
            return .schedule
        case .background:
            return frames >= backstop ? .checkpointHere : .none
        case .tail:
            step = .idle
            return .checkpointHere
        }
    }

    /// The background checkpoint finished (or failed: the tail copies everything then).
    mutating func backgroundDone() {
        if step == .background { step = .tail }
    }
}
