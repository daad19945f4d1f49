import Foundation
import Synchronization

/// The mesh dial proofs a database accepted recently, so that each is accepted once:
/// a proof captured off a plain link cannot be replayed. Entries are dropped once
/// they are too old to pass the clock check anyway.
public final class MeshProofLedger: Sendable {
    private let seen = Mutex<[String: Date]>([:])
    private let lifetime: TimeInterval

    public init(lifetime: TimeInterval = MeshSecret.maxSkew * 2) {
        self.lifetime = lifetime
    }

    /// True the first time `proof` is presented (and records it); false afterwards.
    public func firstUse(_ proof: String, now: Date = Date()) -> Bool {
        seen.withLock { seen in
            if seen.count > 256 {
                seen = seen.filter { now.timeIntervalSince($0.value) < lifetime }
            }
            guard seen[proof] == nil else { return false }
            seen[proof] = now
            return true
        }
    }
}
