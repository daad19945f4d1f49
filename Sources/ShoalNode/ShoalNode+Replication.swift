import AccessControl
import BLIP
import Blocking
import HTTPTypes
import DocumentModel
import Foundation
import DocumentStore
import Logging
import Mesh
import Replication
import RESTServer

extension ShoalNode: SyncAcceptor {
    /// A passive replication session for each BLIP connection to one of our databases.
    /// Who may connect: the admin port and mesh peers (with the mesh secret's proof when
    /// the database has one) replicate everything; anyone else authenticates as a user
    /// (Basic, session cookie or GUEST) and gets that user's channels and write rules.
    /// Clients that are neither mesh peers nor Shoal replicators are in no-conflicts mode.
    /// How the peer speaks (`PeerAccess.dialect`) follows from the negotiated subprotocol and
    /// who it is (a `BLIP_3+CBMobile_4` connection names documents by versions).
    public func syncSession(
        database: String, isAdmin: Bool, headers: HTTPFields, tlsBinding: [UInt8]?, subprotocol: String
    ) async throws(SyncRefusal) -> SyncAcceptance {
        // A database, never a collection's keyspace: collections are reached through getCollections.
        guard databaseNames.contains(database), let store = self.database(named: database) else { throw .noDatabase(database) }
        let peerNodeID = headers[WebSocketDialer.nodeIDHeader]
        let security = security(database: database)
        var access = PeerAccess.full
        var principal: Principal?
        var answer: HTTPFields = [:]
        if let peerNodeID, let reason = nemesis?.refusal(peer: peerNodeID) {
            throw SyncRefusal(status: 503, reason: reason)
        }
        if let peerNodeID {
            let proofHeader = HTTPField.Name(MeshSecret.header)!
            if let refusal = security?.meshRefusal(nodeID: peerNodeID, proof: headers[proofHeader], binding: tlsBinding) {
                logger.warning("refused a mesh link from \(peerNodeID) to \(database): \(refusal)")
                throw SyncRefusal(status: 401, reason: refusal)
            }
            answer[WebSocketDialer.nodeIDHeader] = nodeID
            if let proof = security?.meshAnswer(nodeID: nodeID, dialProof: headers[proofHeader], binding: tlsBinding) {
                answer[proofHeader] = proof
            }
        } else if !isAdmin, let security {
            do throws(PrincipalError) {
                let authenticated = try await security.authenticate(authorization: headers[.authorization], cookie: headers[.cookie])
                access = Self.peerAccess(authenticated, security: security)
                principal = authenticated
            } catch {
                throw SyncRefusal(status: error.status, reason: error.reason)
            }
        }
        // Couchbase Lite clients (anything that is neither a mesh peer nor Shoal's own
        // replicator) replicate in Sync Gateway's no-conflicts mode.
        let client = peerNodeID == nil && headers[WebSocketDialer.replicatorHeader] == nil
        let dialect = PeerDialect(subprotocol: subprotocol, peer: client ? .client : .shoal)
        access.dialect = dialect
        // What the peer's revisions are recorded as: the mesh node, or the user a client is.
        access.origin = .peer(node: peerNodeID, detail: access.origin.detail)
        let mesh = peerNodeID == nil ? nil : meshes[database]
        if let mesh, let peerNodeID, !mesh.acceptsInbound(from: peerNodeID) {
            // Not 401/403/404: the dialer retries (the link may be gone by then).
            throw SyncRefusal(status: 409, reason: "a mesh link with node \(peerNodeID) is already up")
        }
        if let mesh, let peerNodeID {
            mesh.peerReported(nodeID: peerNodeID, header: headers[HTTPField.Name(MeshManager.peersHeader)!])
            answer[HTTPField.Name(MeshManager.peersHeader)!] = mesh.peersHeaderValue
        }
        let user = principal
        let linkFaults = peerNodeID.flatMap { nemesis?.linkFaults(peer: $0) }
        return SyncAcceptance(responseHeaders: answer) { [access] connection in
            if let linkFaults { connection.setFaults(linkFaults) }
            // The session's handlers are registered here, before the first frame is read.
            let collections = PassiveCollections(
                store: store, connection: connection, access: access, logger: Logger(label: "Sync")
            ) { [self] name in
                // A collection of this database, with the peer's access there.
                guard let named = collectionStores(database: database)[name] else { return nil }
                var collectionAccess = PeerAccess.full
                if let user, let security = self.security(database: name.keyspace(in: database)) {
                    collectionAccess = Self.peerAccess(user, security: security)
                }
                collectionAccess.dialect = dialect
                return (named, collectionAccess)
            }
            let session = collections.defaultSession
            let heard = mesh.map { MeshPeerReports.receive(on: connection, mesh: $0) }
            return {
                let reporter = mesh.map { mesh in
                    Task {
                        await MeshPeerReports.send(
                            on: connection, mesh: mesh, nodeID: self.nodeID, interval: self.configuration.heartbeat * 2, heard: heard)
                    }
                }
                defer { reporter?.cancel() }
                let token = mesh?.inboundStarted(nodeID: peerNodeID, progress: session.progress)
                await mesh?.inboundConnected(nodeID: peerNodeID)
                defer {
                    collections.close()
                    if let token { mesh?.inboundEnded(token) }
                }
                // Serve until the connection ends (the transport cancels this task then).
                while !Task.isCancelled && !connection.isClosed {
                    try? await Task.sleep(for: .seconds(3600))
                }
            }
        }
    }
}

extension ShoalNode {
    /// What a user's BLIP connection may do: write as the user (the sync function checks
    /// it), pull the channels the user can read (asked again for every batch; a read
    /// that fails ends the pull with an error, and the peer retries).
    static func peerAccess(_ principal: Principal, security: DatabaseSecurity) -> PeerAccess {
        guard let user = principal.access?.user else { return .full }
        return PeerAccess(
            author: principal.author,
            channels: { try await security.access(for: user).channels },
            lostChannels: { since in try await security.lostChannels(of: user, access: security.access(for: user), since: since) },
            origin: .peer(node: nil, detail: "user \(user.name)"))
    }
}

extension ShoalNode: ReplicationController {
    /// Checks the definition, keeps it in `replications.json` (answered only once it is
    /// there: a created replication survives a crash), then starts it.
    public func putReplication(database: String, id: String, definition: [String: JSON]) async throws {
        let prepared = try prepareReplication(database: database, id: id, definition: definition)
        try await updateStoredReplications { $0[database, default: [:]][id] = .object(definition) }
        await replications.start(prepared.configuration, store: prepared.store, collections: prepared.collections)
    }

    /// Starts a replication without recording it (config-file replications).
    func startReplication(database: String, id: String, definition: [String: JSON]) async throws {
        let prepared = try prepareReplication(database: database, id: id, definition: definition)
        await replications.start(prepared.configuration, store: prepared.store, collections: prepared.collections)
    }

    /// The replication a definition describes, with its store and collections; throws
    /// `ReplicationControlError` (400) for a bad one.
    private func prepareReplication(
        database: String, id: String, definition: [String: JSON]
    ) throws -> (configuration: ReplicationConfiguration, store: DocumentStore, collections: [(name: CollectionName, store: DocumentStore)]) {
        guard let store = self.database(named: database) else {
            throw ReplicationControlError(reason: "no such database '\(database)'")
        }
        var configuration: ReplicationConfiguration
        do {
            configuration = try ReplicationConfiguration(id: id, json: definition)
        } catch {
            throw ReplicationControlError(reason: error.reason)
        }
        let collections = try replicatedCollections(database: database, configuration)
        if definition["heartbeat"] == nil { configuration.heartbeat = self.configuration.heartbeat }
        return (configuration, store, collections)
    }

    /// The collections a replication names, with their stores (empty: the default one).
    func replicatedCollections(
        database: String, _ configuration: ReplicationConfiguration
    ) throws -> [(name: CollectionName, store: DocumentStore)] {
        let available = collectionStores(database: database)
        if let names = configuration.collections {
            return try names.map { name in
                guard let store = available[name] else {
                    throw ReplicationControlError(reason: "database '\(database)' has no collection \(name)")
                }
                return (name, store)
            }
        }
        guard configuration.allCollections else { return [] }
        return available.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    public func replicationDefinitions(database: String) -> [String: JSON] {
        replications.replications(database: database).mapValues(\.configuration.json)
    }

    public func replicationStatuses(database: String) -> [String: JSON] {
        replications.replications(database: database).mapValues { $0.status.json(id: $0.configuration.id) }
    }

    public func removeReplication(database: String, id: String) async throws -> Bool {
        try await updateStoredReplications { _ = $0[database]?.removeValue(forKey: id) }
        return await replications.remove(database: database, id: id)
    }

    public func setReplicationRunning(database: String, id: String, running: Bool) async -> Bool {
        guard let replicator = replications.replication(database: database, id: id), let store = self.database(named: database) else {
            return false
        }
        if running {
            await replications.start(replicator.configuration, store: store, collections: replicator.collections)
        } else {
            await replicator.stop()
        }
        return true
    }

    /// Where replications created through the admin API are kept across restarts.
    var storedReplicationsPath: String {
        (configuration.dataDirectory as NSString).appendingPathComponent("replications.json")
    }

    /// Applies `change` to the kept replications and writes the file, under one lock
    /// (two requests never write in the wrong order); when the file cannot be written,
    /// nothing changes and the error says which file and why (507 for a full disk). The
    /// write and its fsyncs run on the blocking pool, the lock held there.
    private func updateStoredReplications(
        _ change: @escaping @Sendable (inout [String: [String: JSON]]) -> Void
    ) async throws(ReplicationControlError) {
        try await BlockingPool.shared.perform { () throws(ReplicationControlError) in try self.storeReplications(change) }
    }

    private func storeReplications(_ change: (inout [String: [String: JSON]]) -> Void) throws(ReplicationControlError) {
        let path = storedReplicationsPath
        try storedReplications.withLock { (stored) throws(ReplicationControlError) in
            var next = stored
            change(&next)
            guard next != stored else { return }
            do throws(DurableFile.Failure) {
                try DurableFile.replace(path, with: JSON.object(next.mapValues { .object($0) }).canonicalBytes())
            } catch {
                logger.error("replications not changed: \(error)")
                let full = error.code == ENOSPC || error.code == EDQUOT
                throw ReplicationControlError(reason: "replication not kept for the next start: \(error)", status: full ? 507 : 500)
            }
            stored = next
        }
    }

    /// Restarts the replications created through the admin API before the last stop.
    func startStoredReplications() async {
        guard let data = FileManager.default.contents(atPath: storedReplicationsPath),
              let stored = (try? JSON.parse(data))?.objectValue
        else { return }
        for (database, entries) in stored.sorted(by: { $0.key < $1.key }) {
            for (id, definition) in (entries.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                guard let definition = definition.objectValue else { continue }
                storedReplications.withLock { $0[database, default: [:]][id] = .object(definition) }
                do {
                    try await startReplication(database: database, id: id, definition: definition)
                } catch {
                    logger.error("stored replication \(id) of \(database) not restarted: \(error)")
                }
            }
        }
    }

    /// Starts the replications declared in the config file.
    func startConfiguredReplications() async {
        for database in configuration.databases {
            for (id, definition) in database.replications.sorted(by: { $0.key < $1.key }) {
                do {
                    try await startReplication(database: database.name, id: id, definition: definition)
                } catch {
                    logger.error("replication \(id) of \(database.name) not started: \(error)")
                }
            }
        }
    }
}
