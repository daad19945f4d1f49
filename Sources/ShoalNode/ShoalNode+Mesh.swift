import DocumentModel
import Mesh
import RESTServer

extension ShoalNode: MeshController {
    public func meshStatus() -> JSON {
        let groups: [JSON] = meshes.keys.sorted().compactMap { name in
            guard let mesh = meshes[name] else { return nil }
            let totals = mesh.totals
            return [
                "database": .string(name),
                "group": .string(mesh.configuration.group),
                "max_peers": .int(Int64(mesh.configuration.maxPeers)),
                "static_peers": .array(mesh.configuration.staticPeers.map { .string($0) }),
                "peers_connected": .int(Int64(totals.connected)),
            ]
        }
        return [
            "node_id": .string(nodeID),
            "meshes": .array(groups),
            "discovery": .string(discoveryState),
        ]
    }

    public func meshPeers(database: String) -> JSON? {
        guard let mesh = meshes[database] else { return nil }
        return [
            "node_id": .string(nodeID),
            "group": .string(mesh.configuration.group),
            "peers": .array(mesh.peers.map(\.json)),
        ]
    }

    /// Until DNS-SD discovery is wired in, peers come from configuration only.
    var discoveryState: String { "static" }
}
