import AccessControl
import DocumentStore
import Foundation
import HTTPTypes
import Hummingbird
import Discovery
import DocumentModel
import Logging
import Mesh
import Replication
import RESTServer
import ServiceLifecycle
import Synchronization
import Query

/// A running Shoal node: opens its databases, serves the public and admin REST
/// listeners, and closes everything cleanly on shutdown.
public final class ShoalNode: DatabaseRegistry, Sendable {
    public let configuration: NodeConfiguration
    private let stores: [String: DocumentStore]
    let logger: Logger
    /// Named replications (admin API and config file).
    public let replications: ReplicationManager
    /// This node's persistent ID (`<data>/node-id`).
    public let nodeID: String
    /// The mesh of each database that takes part in one, by database name.
    public let meshes: [String: MeshManager]
    /// Conflict resolution of each database (§4), by database name.
    public let conflictMonitors: [String: ConflictMonitor]
    /// Users, roles and the sync function of each database (§6), by database name.
    let securities: [String: DatabaseSecurity]
    /// Map/reduce views of each database (docs/queries.md), by database name.
    let viewEngines: [String: ViewEngine]
    /// TLS of the public port (nil: plain HTTP only).
    let publicTLS: ListenerTLS?
    /// HTTP request counters of both listeners.
    let requestMetrics: RequestMetrics
    /// The node's metrics registry (`/_metrics`).
    let metrics = NodeMetrics()
    /// How late the cooperative pool runs ready tasks (metric and warning; runs while started).
    let poolLag: PoolLagMonitor
    /// Replications created through the admin API, by database and ID (persisted).
    let storedReplications = Mutex<[String: [String: JSON]]>([:])
    private let running = Mutex<Running?>(nil)
    /// The ports the listeners bound, once started (node details of `/_mesh`).
    let boundPorts = Mutex<BoundPorts?>(nil)
    /// When this node object was created (uptime in `/_mesh`).
    let startedAt = Date()
    /// Settings changed through the admin config API, by database (`ShoalNode+Config.swift`).
    let runtime = Mutex<[String: RuntimeSettings]>([:])
    /// Faults injected on request (nil: the config leaves the nemesis off).
    public let nemesis: Nemesis?
    /// DNS-SD per mesh group, and the tasks feeding it into the meshes.
    private let discoveries = Mutex<[(ServiceDiscovery, Task<Void, Never>)]>([])

    private struct Running: Sendable {
        let group: ServiceGroup
        let task: Task<Void, any Error>
    }

    /// The ports the listeners actually bound (useful with port 0).
    public struct BoundPorts: Sendable, Equatable {
        public let publicPort: Int
        public let adminPort: Int
    }

    /// Opens every configured database (creating the data directory as needed).
    public init(configuration: NodeConfiguration) throws {
        self.configuration = configuration
        logger = Logger(label: "Node")
        requestMetrics = RequestMetrics(factory: metrics.factory)
        poolLag = PoolLagMonitor(factory: metrics.factory, logger: Logger(label: "Node"))
        var stores: [String: DocumentStore] = [:]
        do {
            for database in configuration.databases {
                var storeConfiguration = configuration.storeConfiguration(for: database)
                do throws(EncryptionError) {
                    storeConfiguration.encryption = try database.encryption?.load()
                } catch {
                    throw error.naming(database.name)
                }
                let store = try DocumentStore(configuration: storeConfiguration, logger: Logger(label: "CRUD"))
                stores[database.name] = store
                for collection in database.collections {
                    stores[Self.keyspace(database.name, collection.name)] = try store.collection(collection.name)
                }
            }
        } catch {
            // Databases opened before the one that failed are closed again, untouched.
            for store in stores.values { store.close() }
            throw error
        }
        self.stores = stores
        var securities: [String: DatabaseSecurity] = [:]
        for (database, _) in Self.keyspaces(of: configuration) {
            securities[database.name] = try Self.makeSecurity(
                for: database, store: stores[database.name]!, passwordIterations: configuration.passwordIterations)
        }
        self.securities = securities
        let nodeID = try NodeIdentity.load(dataDirectory: configuration.dataDirectory)
        self.nodeID = nodeID
        var monitors: [String: ConflictMonitor] = [:]
        for (database, _) in Self.keyspaces(of: configuration) {
            monitors[database.name] = ConflictMonitor(
                store: stores[database.name]!, policies: database.conflicts,
                script: try Self.conflictScript(for: database), nodeID: nodeID, logger: Logger(label: "Conflicts"))
        }
        conflictMonitors = monitors
        // One view engine per keyspace: a named collection's indexes live in the file's
        // query tables under its own namespace (`IndexNamespace`).
        viewEngines = stores.mapValues {
            ViewEngine(store: $0, options: .init(timeout: configuration.viewTimeout), logger: Logger(label: "Query"))
        }
        replications = ReplicationManager(
            dialer: WebSocketDialer(), clientDialer: WebSocketDialer(extraHeaders: [:]), logger: Logger(label: "Replicate"))
        let secrets = Dictionary(uniqueKeysWithValues: configuration.databases.compactMap { database in
            database.meshSecret.map { (database.name, MeshSecret($0)) }
        })
        // The public port's TLS: the configured certificate (HTTPS only), else the node's
        // own certificate when a mesh uses TLS (TLS and plain HTTP on the same port).
        let tlsDatabases = Set(configuration.databases.filter(\.meshTLS).map(\.name))
        do {
            if let certificate = configuration.sslCertificatePath, let key = configuration.sslKeyPath {
                publicTLS = try ListenerTLS(certificatePath: certificate, keyPath: key, mode: .required)
            } else if !tlsDatabases.isEmpty {
                let paths = try NodeCertificate.loadOrCreate(dataDirectory: configuration.dataDirectory, nodeID: nodeID)
                publicTLS = try ListenerTLS(certificatePath: paths.certificate, keyPath: paths.key, mode: .optional)
            } else {
                publicTLS = nil
            }
        } catch {
            throw ConfigLoader.ConfigError(message: "TLS: \(error)")
        }
        let everyLinkTLS = configuration.sslCertificatePath != nil
        let nemesis = configuration.nemesis.enabled
            ? Nemesis(
                settings: configuration.nemesis,
                stores: Dictionary(uniqueKeysWithValues: configuration.databases.map { ($0.name, stores[$0.name]!) }),
                metrics: metrics, logger: Logger(label: "Nemesis"))
            : nil
        self.nemesis = nemesis
        // The meshes exist only after the dialer they share: acceptor IDs reach them late-bound.
        let meshesByName = Mutex<[String: MeshManager]>([:])
        let webSocketDialer = WebSocketDialer(
            extraHeaders: [WebSocketDialer.nodeIDHeader: nodeID],
            plan: { url in
                // Over TLS when the database's mesh (or every port) uses it; the peer is
                // authenticated by the proofs of the database's mesh secret, bound to the
                // certificate the handshake shows.
                let database = ReplicationConfiguration(id: "", remote: url).remoteDatabase ?? ""
                var target = url
                if everyLinkTLS || tlsDatabases.contains(database), target.lowercased().hasPrefix("ws://") {
                    target = "wss://" + target.dropFirst("ws://".count)
                }
                let mesh = meshesByName.withLock { $0[database] }
                return .init(
                    url: target, tls: .boundByApplication,
                    hook: MeshLinkHook(
                        secret: secrets[database], nodeID: nodeID, database: database,
                        neighbors: { mesh?.peersHeaderValue ?? "" },
                        refuse: { nemesis?.refusal(peer: $0) }
                    ) { acceptor, reported in
                        nemesis?.dialed(url: url, acceptor: acceptor)
                        mesh?.linked(remote: url, nodeID: acceptor)
                        mesh?.peerReported(nodeID: acceptor, header: reported)
                    },
                    connectTimeout: MeshConfiguration.connectTimeout)
            },
            logger: Logger(label: "Mesh"))
        let meshDialer = MeshReportingDialer(
            inner: webSocketDialer, nodeID: nodeID, interval: configuration.heartbeat * 2, nemesis: nemesis
        ) { url in
            meshesByName.withLock { $0[ReplicationConfiguration(id: "", remote: url).remoteDatabase ?? ""] }
        }
        var meshes: [String: MeshManager] = [:]
        for database in configuration.databases where database.meshEnabled {
            let peers = configuration.peers.filter { ReplicationConfiguration(id: "", remote: $0).remoteDatabase == database.name }
            let mesh = MeshConfiguration(
                nodeID: nodeID, group: database.group, maxPeers: database.maxPeers,
                heartbeat: configuration.heartbeat, staticPeers: peers)
            // Mesh links replicate every collection of the database (the default one first).
            let collections = [(name: CollectionName.default, store: stores[database.name]!)]
                + database.collections.map { ($0.name, stores[Self.keyspace(database.name, $0.name)]!) }
            meshes[database.name] = MeshManager(
                store: stores[database.name]!, configuration: mesh, dialer: meshDialer, logger: Logger(label: "Mesh"),
                collections: collections)
        }
        self.meshes = meshes
        meshesByName.withLock { $0 = meshes }
        // A lifted fault may have healed a link: every mesh redials at once.
        nemesis?.setOnLift { [meshes] in for mesh in meshes.values { mesh.redialNow() } }
    }

    public func database(named name: String) -> DocumentStore? { stores[name] }
    public func views(database name: String) -> ViewEngine? { viewEngines[name] }
    /// `https` when the public port takes only TLS (`SSLCert`), else `http`.
    public var publicScheme: String { publicTLS?.mode == .required ? "https" : "http" }
    public var databaseNames: [String] { configuration.databases.map(\.name) }

    /// Starts both listeners and returns once they accept connections. With
    /// `handleSignals`, SIGINT and SIGTERM stop the node gracefully. `onShutdown` runs
    /// once, when a graceful stop begins (a signal or `stop()`), before the listeners close.
    @discardableResult
    public func start(handleSignals: Bool = false, onShutdown: (@Sendable () -> Void)? = nil) async throws -> BoundPorts {
        poolLag.start()
        try await bootstrapPrincipals()
        let ready = ReadySignal()
        var restConfiguration = RESTConfiguration(version: ShoalVersion.string, maxRequestBytes: configuration.maxRequestBytes)
        restConfiguration.nodeID = nodeID
        restConfiguration.cors = configuration.cors
        restConfiguration.idleTimeout = configuration.httpIdleTimeout
        var hummingbirdLogger = Logger(label: "HTTP")
        hummingbirdLogger.logLevel = .critical
        func application(_ address: ListenAddress, admin: Bool) -> some Service {
            let handler = RESTHandler(
                registry: self, configuration: restConfiguration, isAdmin: admin, logger: Logger(label: "HTTP"),
                replications: self, mesh: self, nemesis: self, metrics: requestMetrics,
                tlsCertificateDigest: admin ? nil : publicTLS?.certificateDigest)
            return RESTListener.makeApplication(
                handler: handler, host: address.host, port: address.port, sync: self, heartbeat: configuration.heartbeat,
                tls: admin ? nil : publicTLS, onRunning: { port in ready.bound(admin: admin, port: port) }, logger: hummingbirdLogger)
        }
        let group = ServiceGroup(configuration: .init(
            services: [
                .init(service: application(configuration.publicAddress, admin: false)),
                .init(service: application(configuration.adminAddress, admin: true)),
                // Last, so that graceful shutdown reaches it first.
                .init(service: ShutdownObserver(action: onShutdown), successTerminationBehavior: .ignore),
            ],
            gracefulShutdownSignals: handleSignals ? [.sigterm, .sigint] : [],
            logger: logger))
        let task = Task {
            do {
                try await group.run()
                ready.failed(CancellationError())
            } catch {
                ready.failed(error)
                throw error
            }
        }
        running.withLock { $0 = Running(group: group, task: task) }
        let ports = try await ready.wait()
        boundPorts.withLock { $0 = ports }
        for monitor in conflictMonitors.values {
            let store = monitor.store
            monitor.setMergeBaseProvider { docID, rev in await RevisionSources.fetch(store: store, docID: docID, rev: rev) }
            monitor.start()
        }
        await startConfiguredReplications()
        await startStoredReplications()
        for mesh in meshes.values { await mesh.start() }
        if configuration.discovery { startDiscovery(publicPort: ports.publicPort) }
        return ports
    }

    /// Runs until the listeners stop (a signal, or `stop()`), then closes the databases.
    public func waitUntilStopped() async {
        guard let running = running.withLock({ $0 }) else { return }
        _ = try? await running.task.value
        nemesis?.stop()
        await stopReplication()
        await closeStores()
    }

    /// Stops the listeners gracefully and closes the databases.
    /// Logs how long each part took (a chaos run's kill-and-restart waits on it).
    public func stop() async {
        let clock = ContinuousClock()
        let start = clock.now
        nemesis?.stop()
        await stopReplication()
        let replicationStopped = clock.now
        if let running = running.withLock({ $0 }) {
            await running.group.triggerGracefulShutdown()
            _ = try? await running.task.value
        }
        let listenersStopped = clock.now
        await closeStores()
        let end = clock.now
        logger.info("""
            stopped in \((end - start).wholeMilliseconds) ms: replication \((replicationStopped - start).wholeMilliseconds) ms, \
            listeners \((listenersStopped - replicationStopped).wholeMilliseconds) ms, stores \((end - listenersStopped).wholeMilliseconds) ms
            """)
    }

    /// Registers and browses one DNS-SD service per mesh group.
    private func startDiscovery(publicPort: Int) {
        var byGroup: [String: [String]] = [:]
        for (name, mesh) in meshes { byGroup[mesh.configuration.group, default: []].append(name) }
        for (group, names) in byGroup.sorted(by: { $0.key < $1.key }) {
            var settings = DiscoveryConfiguration(nodeID: nodeID, group: group, port: publicPort, databases: names.sorted())
            // Only the peers some database's dial rule links to are resolved.
            settings.resolveOnDemand = true
            // The browse rests 3 s after it opened; the mesh's refresh() reopens it while a
            // peer it dials stays unlinked or it has no link at all (a heal, a peer gone, a
            // node that started before anyone else was on the network).
            settings.browseRestsAfter = .seconds(3)
            let discovery = ServiceDiscovery(configuration: settings, logger: Logger(label: "Discovery"))
            // The group's databases share the discovery (its events are taken once).
            let members = names.sorted().compactMap { name in meshes[name].map { (mesh: $0, database: name) } }
            let task = MeshManager.follow(discovery, meshes: members)
            discoveries.withLock { $0.append((discovery, task)) }
            discovery.start()
        }
    }

    /// Whether DNS-SD is in use and reachable.
    var discoveryState: String {
        let all = discoveries.withLock { $0.map(\.0) }
        guard configuration.discovery else { return "disabled" }
        guard let first = all.first else { return "starting" }
        return first.isDaemonAvailable ? "mdns" : "unavailable (static peers only)"
    }

    private func stopReplication() async {
        let started = discoveries.withLock { all in
            defer { all.removeAll() }
            return all
        }
        var stopped = Set<ObjectIdentifier>()
        for (discovery, task) in started {
            task.cancel()
            if stopped.insert(ObjectIdentifier(discovery)).inserted { await discovery.stop() }
        }
        for mesh in meshes.values { await mesh.stop() }
        await replications.stopAll()
        for monitor in conflictMonitors.values { await monitor.stop() }
        for engine in viewEngines.values { await engine.close() }
    }

    /// Closes the databases (on the blocking pool) and stops the lag probe.
    private func closeStores() async {
        for store in stores.values { await store.close() }
        poolLag.stop()
    }
}

/// Collects the bound ports of both listeners, or the error that stopped them.
private final class ReadySignal: Sendable {
    private struct State {
        var publicPort: Int?
        var adminPort: Int?
        var error: (any Error)?
        var continuation: CheckedContinuation<ShoalNode.BoundPorts, any Error>?
    }
    private let state = Mutex(State())

    func bound(admin: Bool, port: Int) {
        state.withLock { state in
            if admin { state.adminPort = port } else { state.publicPort = port }
            resume(&state)
        }
    }

    func failed(_ error: any Error) {
        state.withLock { state in
            if state.error == nil { state.error = error }
            resume(&state)
        }
    }

    func wait() async throws -> ShoalNode.BoundPorts {
        try await withCheckedThrowingContinuation { continuation in
            state.withLock { state in
                state.continuation = continuation
                resume(&state)
            }
        }
    }

    private func resume(_ state: inout State) {
        guard let continuation = state.continuation else { return }
        if let publicPort = state.publicPort, let adminPort = state.adminPort {
            continuation.resume(returning: .init(publicPort: publicPort, adminPort: adminPort))
        } else if let error = state.error {
            continuation.resume(throwing: error)
        } else {
            return
        }
        state.continuation = nil
    }
}
