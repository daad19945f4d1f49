import Crypto
import DocumentModel
import DocumentStore
import Foundation

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
    /// (Sync Gateway's `_resync`) and remembers that function.
    public func resync() async throws(StoreError) -> DocumentStore.ResyncResult {
        let result = try await store.resync()
        try await store.setInfoValue(Self.syncFingerprintKey, syncFingerprint)
        return result
    }

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
        return try await resync()
    }
}
