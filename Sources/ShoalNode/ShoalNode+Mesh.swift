import DocumentModel
import DocumentStore
import Foundation
import Mesh
import RESTServer

extension ShoalNode: MeshController {
    public func meshStatus() async -> JSON {
        var groups: [JSON] = []
        for name in meshes.keys.sorted() {
            guard let mesh = meshes[name] else { continue }
            let totals = mesh.totals
            let convergence = await mesh.convergence()
            groups.append([
                "database": .string(name),
                "group": .string(mesh.configuration.group),
                "max_peers": .int(Int64(mesh.configuration.maxPeers)),
                "static_peers": .array(mesh.configuration.staticPeers.map { .string($0) }),
                "peers_connected": .int(Int64(totals.connected)),
                "in_step": .bool(convergence.inStep),
                "last_seq": .int(Int64(clamping: convergence.lastSequence)),
                "unlinked": .array(convergence.unlinked.map { .string($0) }),
                "peers": .array(convergence.peers.map(\.json)),
                "peers_of_peers": .object(mesh.peersOfPeers.mapValues { .array($0.map { .string($0) }) }),
            ])
        }
        return [
            "node_id": .string(nodeID),
            "node": nodeDetails,
            "meshes": .array(groups),
            "discovery": .string(discoveryState),
            "nemesis": nemesisStatus(),
        ]
    }

    public func meshPeers(database: String) async -> JSON? {
        guard let mesh = meshes[database] else { return nil }
        let convergence = await mesh.convergence()
        return [
            "node_id": .string(nodeID),
            "group": .string(mesh.configuration.group),
            "in_step": .bool(convergence.inStep),
            "last_seq": .int(Int64(clamping: convergence.lastSequence)),
            "unlinked": .array(convergence.unlinked.map { .string($0) }),
            "peers": .array(convergence.peers.map(\.json)),
        ]
    }
}

extension ShoalNode {
    /// What the admin UI's node details show: ID, version, listen addresses, databases,
    /// uptime and resident memory.
    var nodeDetails: JSON {
        let ports = boundPorts.withLock { $0 }
        var addresses: [String: JSON] = [:]
        addresses["public"] = .string(ListenAddress(
            host: configuration.publicAddress.host, port: ports?.publicPort ?? configuration.publicAddress.port).description)
        addresses["admin"] = .string(ListenAddress(
            host: configuration.adminAddress.host, port: ports?.adminPort ?? configuration.adminAddress.port).description)
        var details: [String: JSON] = [
            "node_id": .string(nodeID),
            "version": .string(ShoalVersion.string),
            "addresses": .object(addresses),
            "databases": .array(databaseNames.sorted().map { .string($0) }),
            "started": .string(ISO8601Time.string(startedAt)),
            "uptime_seconds": .int(Int64(Date().timeIntervalSince(startedAt))),
        ]
        if let rss = Self.residentBytes() { details["rss_bytes"] = .int(Int64(rss)) }
        return .object(details)
    }

    /// This process's resident set size from `/proc/self/statm` (nil where there is none).
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// `/_metrics`: the node's registry, with the components' current state set first.
    public func metricsText() -> String {
        let names = databaseNames.sorted()
        let meshTotals = names.map { ($0, meshes[$0]?.totals ?? MeshTotals()) }
        let resolvers = names.map { ($0, conflictMonitors[$0]?.counters ?? ConflictMonitor.Counters()) }
        let stores = names.compactMap { name in database(named: name).map { (name, $0) } }
        typealias Sample = NodeMetrics.Sample
        typealias PeerSample = NodeMetrics.PeerSample
        // Per link, as `_peers` shows them (documents not counted: a scrape reads no store).
        let links = names.compactMap { name in
            meshes[name].map { (name, $0.convergenceEstimate) }
        }
        let peerSamples = [
            PeerSample(name: "shoal_mesh_peer_pending_send_sequences",
                       help: "Local sequences the mesh peer has not acknowledged yet.",
                       values: links.flatMap { db, mesh in mesh.byPeer.map { (db, $0.peer, Optional($0.pendingSend)) } }),
            PeerSample(name: "shoal_mesh_peer_pending_receive_sequences",
                       help: "The mesh peer's sequences not received yet, as it last reported (absent when not known).",
                       values: links.flatMap { db, mesh in mesh.byPeer.map { (db, $0.peer, $0.pendingReceive) } }),
            PeerSample(name: "shoal_mesh_peer_in_step",
                       help: "1 when the link with the mesh peer is up, idle and nothing is pending either way.",
                       values: links.flatMap { db, mesh in mesh.byPeer.map { (db, $0.peer, Optional($0.inStep ? 1 : 0)) } }),
        ]
        return metrics.render(peers: peerSamples, [
            Sample(name: "shoal_mesh_in_step", help: "1 when the database is in step with every mesh peer.", kind: .gauge,
                   values: links.map { ($0.0, $0.1.inStep ? 1 : 0) }),
            Sample(name: "shoal_mesh_peers_connected", help: "Mesh peers with a live connection.", kind: .gauge,
                   values: meshTotals.map { ($0.0, $0.1.connected) }),
            Sample(name: "shoal_replication_docs_out_total", help: "Revisions sent to mesh peers.", kind: .counter,
                   values: meshTotals.map { ($0.0, $0.1.pushed) }),
            Sample(name: "shoal_replication_docs_in_total", help: "Revisions received from mesh peers.", kind: .counter,
                   values: meshTotals.map { ($0.0, $0.1.pulled) }),
            Sample(name: "shoal_replication_bytes_out_total", help: "BLIP bytes sent to mesh peers.", kind: .counter,
                   values: meshTotals.map { ($0.0, $0.1.bytesOut) }),
            Sample(name: "shoal_replication_bytes_in_total", help: "BLIP bytes received from mesh peers.", kind: .counter,
                   values: meshTotals.map { ($0.0, $0.1.bytesIn) }),
            Sample(name: "shoal_mesh_revisions_offered_total", help: "Revisions offered to mesh peers.", kind: .counter,
                   values: meshTotals.map { ($0.0, $0.1.revisions.offered) }),
            Sample(name: "shoal_mesh_revisions_offered_held_total",
                   help: "Revisions offered to mesh peers that already held them.", kind: .counter,
                   values: meshTotals.map { ($0.0, $0.1.revisions.offeredHeld) }),
            Sample(name: "shoal_mesh_revisions_not_offered_total",
                   help: "Revisions not offered to mesh peers known to hold them.", kind: .counter,
                   values: meshTotals.map { ($0.0, $0.1.revisions.notOffered) }),
            Sample(name: "shoal_mesh_revisions_asked_total", help: "Revisions asked for from mesh peers' offers.",
                   kind: .counter, values: meshTotals.map { ($0.0, $0.1.revisions.asked) }),
            Sample(name: "shoal_mesh_revisions_received_total", help: "Revisions received from mesh peers.",
                   kind: .counter, values: meshTotals.map { ($0.0, $0.1.revisions.received) }),
            Sample(name: "shoal_mesh_revisions_stored_total", help: "Revisions from mesh peers that were new here.",
                   kind: .counter, values: meshTotals.map { ($0.0, $0.1.revisions.stored) }),
            Sample(name: "shoal_conflicts_resolved_total", help: "Conflicts this node resolved (wrote a resolution).",
                   kind: .counter, values: resolvers.map { ($0.0, $0.1.resolved) }),
            Sample(name: "shoal_conflict_revisions_written_total", help: "Revisions written by this node's resolutions.",
                   kind: .counter, values: resolvers.map { ($0.0, $0.1.revisionsWritten) }),
            Sample(name: "shoal_conflicts_failed_total", help: "Resolutions that failed (js error, missing body).",
                   kind: .counter, values: resolvers.map { ($0.0, $0.1.failed) }),
            Sample(name: "shoal_conflicts_waiting_for_merge_base", help: "Conflicts waiting for a merge base body from a peer.",
                   kind: .gauge, values: names.map { ($0, conflictMonitors[$0]?.waitingForMergeBase.count ?? 0) }),
            Sample(name: "shoal_documents", help: "Live documents.", kind: .gauge,
                   values: stores.map { ($0.0, $0.1.info().docCount) }),
            Sample(name: "shoal_update_sequence", help: "Latest local sequence.", kind: .counter,
                   values: stores.map { ($0.0, Int($0.1.info().updateSequence)) }),
            Sample(name: "shoal_database_size_bytes", help: "Size of the database files (SQLite + WAL).", kind: .gauge,
                   values: stores.map { ($0.0, $0.1.fileSize) }),
        ])
    }
}
