import Blocking
import DocumentModel
import DocumentStore
import Foundation
import ShoalNode

/// A real `ShoalNode` on ephemeral loopback ports, with helpers to call its public
/// and admin listeners over real sockets.
public final class TestNode: Sendable {
    public let node: ShoalNode
    public let ports: ShoalNode.BoundPorts
    public let directory: TemporaryDirectory

    /// Starts a node serving `databases` (in memory unless `persistent`), with
    /// `conflicts` as every database's default conflict policy when given.
    public static func start(
        databases: [String] = ["db"], persistent: Bool = false, maxDocumentSize: Int? = nil,
        conflicts: ConflictPolicy? = nil,
        directory given: TemporaryDirectory? = nil,
        configure: (inout NodeConfiguration) -> Void = { _ in }
    ) async throws -> TestNode {
        let directory = given ?? TemporaryDirectory(prefix: "shoal-node")
        var configuration = NodeConfiguration()
        configuration.publicAddress = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.adminAddress = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.dataDirectory = directory.path
        // In-process nodes never use DNS-SD (multi-host tests run in namespaces).
        configuration.discovery = false
        configuration.databases = databases.map { name in
            var database = NodeConfiguration.Database(name: name, inMemory: !persistent, durability: .normal)
            if let maxDocumentSize { database.maxDocumentSize = maxDocumentSize }
            if let conflicts { database.conflicts = ConflictPolicies(default: conflicts) }
            return database
        }
        configure(&configuration)
        TestPoolLag.start()
        // Opening the databases and compiling their functions blocks: off the pool.
        let settings = configuration
        let node = try await BlockingPool.shared.perform { () throws in try ShoalNode(configuration: settings) }
        let ports = try await node.start()
        return TestNode(node: node, ports: ports, directory: directory)
    }

    init(node: ShoalNode, ports: ShoalNode.BoundPorts, directory: TemporaryDirectory) {
        self.node = node
        self.ports = ports
        self.directory = directory
    }

    /// Stops the node and (unless `keepingData`) removes its data directory.
    public func stop(keepingData: Bool = false) async {
        await node.stop()
        if !keepingData {
            let directory = directory
            await BlockingPool.shared.perform { directory.remove() }
        }
    }

    /// Sends a request to the public (or admin) listener. A JSON `body` is sent with
    /// `Content-Type: application/json`.
    public func request(
        _ method: String, _ path: String, json body: JSON? = nil, admin: Bool = false,
        headers: [String: String] = [:]
    ) async throws -> HTTPResult {
        var headers = headers
        var bytes: [UInt8]?
        if let body {
            bytes = body.canonicalBytes()
            if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
        }
        return try await HTTPTestClient.send(
            port: admin ? ports.adminPort : ports.publicPort, method: method, path: path, headers: headers, body: bytes)
    }

    /// Sends raw body bytes (for bad JSON, attachments, odd content types).
    public func request(
        _ method: String, _ path: String, raw body: [UInt8], headers: [String: String] = [:], admin: Bool = false
    ) async throws -> HTTPResult {
        try await HTTPTestClient.send(
            port: admin ? ports.adminPort : ports.publicPort, method: method, path: path, headers: headers, body: body)
    }
}

extension TestNode {
    /// An HTTP Basic `Authorization` header for `user`.
    public static func basic(_ user: String, _ password: String) -> [String: String] {
        ["Authorization": "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()]
    }
}
