import ArgumentParser
import DocumentStore
import Foundation
import Logging
import ShoalNode

/// `shoal serve`: starts a node with the config file and flags given (flags win).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run a Shoal node.")

    @Option(name: .long, help: "Config file in Sync Gateway's JSON shape.")
    var config: String?

    @Option(name: .long, help: "Database to serve when the config names none (default: db).")
    var db: String?

    @Option(name: .long, help: "Data directory (default: ./shoal-data).")
    var data: String?

    @Option(name: .long, help: "Public listener address (default: 0.0.0.0).")
    var interface: String?

    @Option(name: .long, help: "Public listener port (default: 4984).")
    var port: Int?

    @Option(name: .customLong("admin-interface"), help: "Admin listener address (default: 127.0.0.1).")
    var adminInterface: String?

    @Option(name: .customLong("admin-port"), help: "Admin listener port (default: 4985).")
    var adminPort: Int?

    @Option(name: .long, help: "Comma-separated log keys to show at debug level (HTTP,CRUD,Changes,… or *).")
    var log: String?

    @Option(name: .long, help: "Commit durability: full (fsync every commit) or normal.")
    var durability: String?

    @Option(name: .long, help: "A static mesh peer, ws://host:port/db (repeatable).")
    var peer: [String] = []

    @Option(name: .long, help: "Mesh group of the databases (default: each database's name).")
    var group: String?

    @Option(name: .customLong("max-peers"), help: "Most mesh connections per database (default 8).")
    var maxPeers: Int?

    @Option(name: .long, help: "Replication heartbeat in seconds (default 2).")
    var heartbeat: Double?

    @Flag(name: .customLong("no-discovery"), help: "Do not use mDNS/DNS-SD (static peers only).")
    var noDiscovery = false

    @Option(name: .customLong("ssl-cert"), help: "TLS certificate (PEM) of the public port: HTTPS and wss:// only (with --ssl-key).")
    var sslCert: String?

    @Option(name: .customLong("ssl-key"), help: "Private key (PEM) of --ssl-cert.")
    var sslKey: String?

    @Option(name: .customLong("encryption-key-file"),
            help: "Encrypt the databases that have no \"encryption\" in the config with this key (32 bytes, raw or hex).")
    var encryptionKeyFile: String?

    @Option(name: .customLong("encryption-passphrase-file"),
            help: "Same, with a key derived from the passphrase on this file's first line (or set SHOAL_ENCRYPTION_PASSPHRASE).")
    var encryptionPassphraseFile: String?

    func run() async throws {
        var configuration = NodeConfiguration()
        var warnings: [String] = []
        var fileNamesDatabases = false
        if let config {
            do {
                let loaded = try ConfigLoader.load(path: config)
                configuration = loaded.configuration
                warnings = loaded.warnings
                fileNamesDatabases = loaded.namesDatabases
            } catch {
                throw ValidationError("\(config): \(error)")
            }
        }
        try apply(to: &configuration, fileNamesDatabases: fileNamesDatabases)
        ShoalLogHandler.bootstrap(enabledKeys: configuration.logKeys)
        let logger = Logger(label: "Config")
        for warning in warnings { logger.warning("\(warning)") }

        let node: ShoalNode
        do {
            node = try ShoalNode(configuration: configuration)
        } catch let error as ConfigLoader.ConfigError {
            // Bad JavaScript in a sync function or conflict resolver.
            throw ValidationError(error.message)
        } catch let error as EncryptionError {
            // A wrong, missing or unexpected key: nothing was opened or changed.
            FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
            throw ExitCode(EncryptionError.exitStatus)
        }
        let notifier = ServiceNotifier()
        let ports: ShoalNode.BoundPorts
        do {
            ports = try await node.start(handleSignals: true, onShutdown: { notifier.stopping() })
        } catch let error as ConfigLoader.ConfigError {
            await node.stop()
            throw ValidationError(error.message)
        } catch {
            await node.stop()
            throw ValidationError(
                "cannot listen on \(configuration.publicAddress) and \(configuration.adminAddress): \(error)")
        }
        let names = configuration.databases.isEmpty
            ? "no databases" : configuration.databases.map(\.name).sorted().joined(separator: ", ")
        print("""
            Shoal \(ShoalVersion.string) node \(node.nodeID) serving \(names) from \(configuration.dataDirectory)
              public: \(node.publicScheme)://\(configuration.publicAddress.host):\(ports.publicPort)/
              admin:  http://\(configuration.adminAddress.host):\(ports.adminPort)/
            """)
        fflush(nil)
        let supervision = ServiceSupervision(
            notifier: notifier, adminHost: configuration.adminAddress.host, adminPort: ports.adminPort,
            publicHost: configuration.publicAddress.host, publicPort: ports.publicPort,
            publicUsesTLS: node.publicScheme == "https")
        await supervision.announceReady(status: "serving \(names); public port \(ports.publicPort), admin port \(ports.adminPort)")
        let watchdog = Task { await supervision.runWatchdog() }
        await node.waitUntilStopped()
        watchdog.cancel()
        logger.info("stopped")
    }

    private func apply(to configuration: inout NodeConfiguration, fileNamesDatabases: Bool) throws {
        if let data { configuration.dataDirectory = data }
        if let interface { configuration.publicAddress.host = interface }
        if let port { configuration.publicAddress.port = try checkedPort(port) }
        if let adminInterface { configuration.adminAddress.host = adminInterface }
        if let adminPort { configuration.adminAddress.port = try checkedPort(adminPort) }
        if let log { configuration.logKeys = Set(log.split(separator: ",").map(String.init)) }
        if let db {
            guard NodeConfiguration.isValidDatabaseName(db) else {
                throw ValidationError("invalid database name \"\(db)\": use lowercase letters, digits and _$()+-, starting with a letter")
            }
            if !fileNamesDatabases { configuration.databases = [NodeConfiguration.Database(name: db)] }
        }
        if !peer.isEmpty { configuration.peers += peer }
        if noDiscovery { configuration.discovery = false }
        if sslCert != nil || sslKey != nil {
            guard let sslCert, let sslKey else { throw ValidationError("--ssl-cert and --ssl-key go together") }
            configuration.sslCertificatePath = sslCert
            configuration.sslKeyPath = sslKey
        }
        for index in configuration.databases.indices {
            if let group { configuration.databases[index].meshGroup = group }
            if let maxPeers {
                guard maxPeers >= 1 else { throw ValidationError("--max-peers must be at least 1") }
                configuration.databases[index].maxPeers = maxPeers
            }
        }
        if let heartbeat {
            guard heartbeat > 0 else { throw ValidationError("--heartbeat must be positive") }
            configuration.heartbeat = .milliseconds(Int(heartbeat * 1000))
        }
        if encryptionKeyFile != nil && encryptionPassphraseFile != nil {
            throw ValidationError("--encryption-key-file and --encryption-passphrase-file exclude each other")
        }
        let environmentPassphrase = ProcessInfo.processInfo.environment[EncryptionSource.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
        let encryption: EncryptionSource? = encryptionKeyFile.map(EncryptionSource.keyFile)
            ?? encryptionPassphraseFile.map(EncryptionSource.passphraseFile)
            ?? environmentPassphrase.map { _ in EncryptionSource.passphraseEnvironment(EncryptionSource.environmentVariable) }
        if let encryption {
            for index in configuration.databases.indices where configuration.databases[index].encryption == nil {
                configuration.databases[index].encryption = encryption
            }
        }
        if let durability {
            guard let value = StoreDurability(rawValue: durability) else {
                throw ValidationError("--durability must be full or normal")
            }
            for index in configuration.databases.indices { configuration.databases[index].durability = value }
        }
    }

    private func checkedPort(_ port: Int) throws -> Int {
        guard (0...65535).contains(port) else { throw ValidationError("port \(port) is out of range") }
        return port
    }
}
