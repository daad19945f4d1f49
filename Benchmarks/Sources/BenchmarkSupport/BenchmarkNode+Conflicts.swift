import DocumentModel
import DocumentStore
import ShoalNode

extension BenchmarkNode {
    /// Like `start(_:durability:)`, with the conflict policies of the database `db`
    /// (its `ConflictMonitor` resolves conflicts with them as they arrive).
    public static func start(_ label: String, durability: StoreConfiguration.Durability,
                             conflicts: ConflictPolicies) async throws -> BenchmarkNode {
        let directory = try TemporaryDirectory(label)
        var configuration = NodeConfiguration()
        configuration.publicAddress = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.adminAddress = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.dataDirectory = directory.path
        var database = NodeConfiguration.Database(name: "db", durability: durability)
        database.conflicts = conflicts
        configuration.databases = [database]
        configuration.discovery = false
        let node: ShoalNode
        do {
            node = try ShoalNode(configuration: configuration)
        } catch {
            directory.remove()
            throw error
        }
        do {
            return BenchmarkNode(node: node, directory: directory, ports: try await node.start())
        } catch {
            await node.stop()
            directory.remove()
            throw error
        }
    }
}
