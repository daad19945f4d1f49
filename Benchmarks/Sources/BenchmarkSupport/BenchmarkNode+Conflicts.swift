import DocumentModel
import DocumentStore
import ShoalNode

extension BenchmarkNode {
    /// Like `start(_:durability:)`, with the conflict policies of the database `db`
    /// (its `ConflictMonitor` resolves conflicts with them as they arrive).
    public static func start(_ label: String, durability: StoreConfiguration.Durability,
                             conflicts: ConflictPolicies) async throws -> BenchmarkNode {
        try await start(label, durability: durability) { $0.conflicts = conflicts }
    }
}
