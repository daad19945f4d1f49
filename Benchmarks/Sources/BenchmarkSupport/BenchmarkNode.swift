import DocumentStore
import ShoalNode

/// A ShoalNode for benchmarks: one database `db`, loopback ports chosen by the
/// kernel, a fresh temporary data directory, no mDNS.
public struct BenchmarkNode: Sendable {
    public let node: ShoalNode
    public let directory: TemporaryDirectory
    public let ports: ShoalNode.BoundPorts

    public static func start(_ label: String, durability: StoreConfiguration.Durability) async throws -> BenchmarkNode {
        let directory = try TemporaryDirectory(label)
        var configuration = NodeConfiguration()
        configuration.publicAddress = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.adminAddress = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.dataDirectory = directory.path
        configuration.databases = [.init(name: "db", durability: durability)]
        configuration.discovery = false
        let node = try ShoalNode(configuration: configuration)
        return BenchmarkNode(node: node, directory: directory, ports: try await node.start())
    }

    /// The node's database.
    public var store: DocumentStore { node.database(named: "db")! }

    /// Stops the node and removes its directory.
    public func stop() async {
        await node.stop()
        directory.remove()
    }
}
