/// Runs a job's passes one at a time, coalescing requests (pure state, kept under the
/// owner's lock): a request while a pass runs is remembered, and that pass is followed
/// by one more, which sees whatever changed meanwhile. Used by `MeshManager.reconcile()`.
struct SerialPasses: Equatable {
    private(set) var running = false
    private(set) var again = false

    /// A pass is asked for: true when the caller should run it (none runs), false when
    /// the running one will run once more instead.
    mutating func request() -> Bool {
        if running {
            again = true
            return false
        }
        running = true
        return true
    }

    /// A pass ended: true when another is due (asked for during this one).
    mutating func passEnded() -> Bool {
        if again {
            again = false
            return true
        }
        running = false
        return false
    }
}
