import Crypto
import DocumentModel
import DocumentStore
import Foundation
import Synchronization

extension DatabaseSecurity {
    /// The `info` key under which the database remembers which sync function produced
    /// its stored channels and grants.
    static let syncFingerprintKey = "sync_function"

    /// Identifies the sync function in effect: the SHA-256 of its source, or `default`
    /// for Sync Gateway's default routing.
    public var syncFingerprint: String {
        guard let source = syncFunction?.source else { return "default" }
        return Digests.hex(SHA256.hash(data: Data(source.utf8)))
    }

    /// Recomputes every document's channels and grants with the sync function in effect
    /// (Sync Gateway's `_resync`) and remembers that function. Its progress is
    /// `resyncStatus` while it runs (`trigger` says why it runs, see `ResyncStatus`).
    public func resync(trigger: String = "request") async throws(StoreError) -> DocumentStore.ResyncResult {
        // Counted first, so that no status of the run shows a total of 0.
        let total = try await store.resyncTotal()
        let run = resyncState.withLock { state -> Int in
            let run = (state?.run ?? 0) + 1
            state = ResyncStatus(run: run, trigger: trigger)
            state?.total = total
            return run
        }
        // Only the latest run reports: an older one still going does not overwrite it.
        let update: @Sendable ((inout ResyncStatus) -> Void) -> Void = { [self] change in
            resyncState.withLock { state in
                if state?.run == run { change(&state!) }
            }
        }
        do throws(StoreError) {
            let result = try await store.resync(total: total) { done, total in
                update { status in
                    status.processed = done.processed
                    status.changed = done.changed
                    status.total = max(total, done.processed)
                }
            }
            try await store.setInfoValue(Self.syncFingerprintKey, syncFingerprint)
            update { status in
                status.state = .completed
                status.endTime = Date()
            }
            return result
        } catch {
            update { status in
                status.state = .error
                status.error = error.reason
                status.endTime = Date()
            }
            throw error
        }
    }

    /// The latest resync since the node started (running or finished), nil for none.
    public var resyncStatus: ResyncStatus? { resyncState.withLock { $0 } }

    /// At start: when the sync function differs from the one the stored access was
    /// computed with, resyncs (a fresh database just remembers the function). Returns
    /// the resync's result, or nil when none was needed.
    public func resyncIfFunctionChanged() async throws(StoreError) -> DocumentStore.ResyncResult? {
        let stored = try await store.infoValue(Self.syncFingerprintKey)
        if stored == syncFingerprint { return nil }
        // A database from before this fingerprint was kept: the default routing is
        // what it was written with when no function is configured.
        if stored == nil && syncFunction == nil {
            try await store.setInfoValue(Self.syncFingerprintKey, syncFingerprint)
            return nil
        }
        return try await resync(trigger: "start")
    }
}
