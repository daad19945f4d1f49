import DocumentModel
import DocumentStore
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

}

extension ShoalNode {
    public func metricsText() -> String {
        var lines: [String] = []
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(String, Int)]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
            for (labels, value) in samples { lines.append("\(name)\(labels) \(value)") }
        }
        let names = databaseNames.sorted()
        func label(_ db: String) -> String { "{db=\"\(db)\"}" }
        let meshTotals = names.map { ($0, meshes[$0]?.totals ?? MeshTotals()) }
        metric("shoal_mesh_peers_connected", "gauge", "Mesh peers with a live connection.",
               meshTotals.map { (label($0.0), $0.1.connected) })
        metric("shoal_replication_docs_out_total", "counter", "Revisions sent to mesh peers.",
               meshTotals.map { (label($0.0), $0.1.pushed) })
        metric("shoal_replication_docs_in_total", "counter", "Revisions received from mesh peers.",
               meshTotals.map { (label($0.0), $0.1.pulled) })
        metric("shoal_replication_bytes_out_total", "counter", "BLIP bytes sent to mesh peers.",
               meshTotals.map { (label($0.0), $0.1.bytesOut) })
        metric("shoal_replication_bytes_in_total", "counter", "BLIP bytes received from mesh peers.",
               meshTotals.map { (label($0.0), $0.1.bytesIn) })
        let resolvers = names.map { ($0, conflictMonitors[$0]?.counters ?? ConflictMonitor.Counters()) }
        metric("shoal_conflicts_resolved_total", "counter", "Conflicts this node resolved (wrote a resolution).",
               resolvers.map { (label($0.0), $0.1.resolved) })
        metric("shoal_conflict_revisions_written_total", "counter", "Revisions written by this node's resolutions.",
               resolvers.map { (label($0.0), $0.1.revisionsWritten) })
        metric("shoal_conflicts_failed_total", "counter", "Resolutions that failed (js error, missing body).",
               resolvers.map { (label($0.0), $0.1.failed) })
        metric("shoal_conflicts_waiting_for_merge_base", "gauge", "Conflicts waiting for a merge base body from a peer.",
               names.map { (label($0), conflictMonitors[$0]?.waitingForMergeBase.count ?? 0) })
        var documents: [(String, Int)] = []
        var sequences: [(String, Int)] = []
        var sizes: [(String, Int)] = []
        for name in names {
            guard let store = database(named: name) else { continue }
            let info = store.info()
            documents.append((label(name), info.docCount))
            sequences.append((label(name), Int(info.updateSequence)))
            sizes.append((label(name), store.fileSize))
        }
        metric("shoal_documents", "gauge", "Live documents.", documents)
        metric("shoal_update_sequence", "counter", "Latest local sequence.", sequences)
        metric("shoal_database_size_bytes", "gauge", "Size of the database files (SQLite + WAL).", sizes)
        return lines.joined(separator: "\n") + "\n"
    }
}
