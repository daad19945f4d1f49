import DocumentModel
import DocumentStore
import ShoalNode

extension BenchmarkNode {
    /// Like `start(_:durability:)`, with the database `db` configured by `configure`
    /// (users, sync function, conflict policies…).
    public static func start(
        _ label: String, durability: StoreConfiguration.Durability, inMemory: Bool = false,
        configure: (inout NodeConfiguration.Database) -> Void
    ) async throws -> BenchmarkNode {
        let directory = try TemporaryDirectory(label)
        var configuration = NodeConfiguration()
        configuration.publicAddress = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.adminAddress = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.dataDirectory = directory.path
        configuration.passwordIterations = 1000
        var database = NodeConfiguration.Database(name: "db", inMemory: inMemory, durability: durability)
        configure(&database)
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
