import Synchronization

// Faults the nemesis puts on a store on purpose (docs/operations.md "The nemesis").

extension DocumentStore {
    /// Makes every write to this database (all its collections) fail as on a full disk,
    /// 507 with a reason that says the fault is injected, or lets writes through again.
    /// Reads go on. Nothing written before is touched.
    public func setDiskFullFault(_ on: Bool) {
        (base ?? self).diskFullFault.store(on, ordering: .relaxed)
    }

    /// Whether writes fail as on a full disk now (`setDiskFullFault`).
    public var hasDiskFullFault: Bool {
        (base ?? self).diskFullFault.load(ordering: .relaxed)
    }
}
