import Foundation

/// The latest resync of a database (the one running, or the last one), as Sync
/// Gateway's `GET /{db}/_resync` reports it: its state, and how many documents it has
/// processed and changed of how many. Kept in memory by `DatabaseSecurity`; a node
/// that just started knows only the resyncs it ran itself.
public struct ResyncStatus: Sendable, Equatable {
    /// Sync Gateway's `status` values that Shoal uses.
    public enum State: String, Sendable {
        case running, completed, error
    }

    /// Numbers the resyncs of this database since the node started (1, 2, …), so a
    /// reader can tell a new one from the last one.
    public var run: Int
    public var state: State
    /// Why it ran: `start` (the function changed while the node was down), `config`
    /// (deployed through `PUT /{db}/_config/sync`) or `request` (`POST /{db}/_resync`).
    public var trigger: String
    public var startTime: Date
    public var endTime: Date?
    /// Documents looked at so far.
    public var processed = 0
    /// Documents whose channels or grants changed so far.
    public var changed = 0
    /// Documents in the database when the resync started (documents created meanwhile
    /// may be processed too, so `processed` can end above it).
    public var total = 0
    /// Why it failed (state `error`).
    public var error: String?

    public init(run: Int, trigger: String, startTime: Date = Date()) {
        self.run = run
        self.trigger = trigger
        self.startTime = startTime
        state = .running
    }
}
