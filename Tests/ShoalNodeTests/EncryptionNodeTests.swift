import DocumentModel
import DocumentStore
import Foundation
import ShoalNode
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Encryption at rest as users meet it: config and flags, the marker scan of a whole
/// node's data directory, rekey over the admin API and the CLI (with SIGKILLs at random
/// moments), wrong keys at start, and an encrypted node meshed with a plain one.
@Suite struct EncryptionNodeTests {
    static let marker = "OKAPI-MARKER"

    /// Writes a new random key file in `directory`.
    static func keyFile(_ directory: TemporaryDirectory, _ name: String) throws -> String {
        let path = directory.path + "/\(name).key"
        let key = EncryptionKey.random()
        try Data((key.hex! + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func encryptedNode(
        key: String, directory: TemporaryDirectory, configure: @escaping (inout NodeConfiguration) -> Void = { _ in }
    ) async throws -> TestNode {
        try await TestNode.start(persistent: true, directory: directory) { configuration in
            configuration.passwordIterations = 1000
            configuration.databases[0].encryption = .keyFile(key)
            configure(&configuration)
        }
    }

    static func scan(_ directory: String) -> [String] {
        let needle = Data(marker.utf8)
        var found: [String] = []
        for name in (try? FileManager.default.subpathsOfDirectory(atPath: directory)) ?? [] {
            let path = (directory as NSString).appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let data = FileManager.default.contents(atPath: path), data.range(of: needle) != nil
            else { continue }
            found.append(name)
        }
        return found
    }

    /// Users, roles, channels, documents, local documents and attachments, all with the marker.
    static func fill(_ node: TestNode) async throws {
        try await node.request("PUT", "/db/_role/role-\(marker)", json: ["admin_channels": .array([.string("chan-\(marker)")])], admin: true)
            .expectStatus(201)
        try await node.request("PUT", "/db/_user/user-\(marker)", json: [
            "password": .string("secret-\(marker)"), "admin_channels": .array([.string("chan2-\(marker)")]),
            "admin_roles": .array([.string("role-\(marker)")]),
        ], admin: true).expectStatus(201)
        for index in 0..<50 {
            try await node.request("PUT", "/db/doc-\(marker)-\(index)", json: [
                "text": .string("\(marker) \(index)"), "channels": .array([.string("chan-\(marker)")]),
            ], admin: true).expectStatus(201)
        }
        let created = try await node.request(
            "PUT", "/db/attached/file.txt", raw: Array(String(repeating: "\(marker) ", count: 30_000).utf8),
            headers: ["Content-Type": "text/plain"], admin: true)
        created.expectStatus(201)
        try await node.request("PUT", "/db/_local/cp-\(marker)", json: ["seq": .string(marker)], admin: true).expectStatus(201)
    }

    @Test func aWholeNodeKeepsNothingInClear() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-enc")
        defer { directory.remove() }
        let keys = TemporaryDirectory(prefix: "shoal-keys")
        defer { keys.remove() }
        let key = try Self.keyFile(keys, "a")
        let node = try await Self.encryptedNode(key: key, directory: directory)
        try await Self.fill(node)
        let attachment = try await node.request("GET", "/db/attached/file.txt", admin: true)
        attachment.expectStatus(200)
        #expect(attachment.body.count == ("\(Self.marker) ".utf8.count * 30_000))
        #expect(Self.scan(directory.path) == [], "while running")
        await node.stop(keepingData: true)
        #expect(Self.scan(directory.path) == [], "after stopping")

        // Started again with the key: everything is there.
        let again = try await Self.encryptedNode(key: key, directory: directory)
        #expect(try await again.request("GET", "/db/", admin: true).json["doc_count"] == 51)
        let user = try await again.request("GET", "/db/_user/user-\(Self.marker)", admin: true).json
        #expect(user["all_channels"]?.arrayValue?.contains(.string("chan-\(Self.marker)")) == true, "\(user)")
        let compact = try await again.request("POST", "/db/_compact", json: [:], admin: true)
        compact.expectStatus(200)
        await again.stop()
    }

    @Test func theAdminAPIRotatesTheKeyOfARunningNode() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-enc")
        defer { directory.remove() }
        let keys = TemporaryDirectory(prefix: "shoal-keys")
        defer { keys.remove() }
        let keyA = try Self.keyFile(keys, "a")
        let keyB = try Self.keyFile(keys, "b")
        let node = try await Self.encryptedNode(key: keyA, directory: directory)
        // Writes go on while the key changes.
        let writer = Task {
            var acknowledged: [String] = []
            for index in 0..<200 {
                let result = try? await node.request("PUT", "/db/w\(index)", json: ["i": .int(Int64(index))], admin: true)
                if result?.status == 201 { acknowledged.append("w\(index)") }
            }
            return acknowledged
        }
        try await Task.sleep(for: .milliseconds(50))
        let rekey = try await node.request("POST", "/db/_rekey", json: ["key_file": .string(keyB)], admin: true)
        rekey.expectStatus(200)
        #expect(rekey.json["encrypted"] == true)
        let acknowledged = await writer.value
        #expect(acknowledged.count == 200)
        // Not on the public port; a bad request says why.
        try await node.request("POST", "/db/_rekey", json: ["key_file": .string(keyA)]).expectStatus(403)
        let bad = try await node.request("POST", "/db/_rekey", json: ["key": .string("00")], admin: true)
        bad.expectStatus(400)
        #expect(bad.json["reason"]?.stringValue?.contains("never holds a key") == true, "\(bad.json)")
        await node.stop(keepingData: true)

        #expect(throws: EncryptionError.self) { try ShoalNode(configuration: Self.configuration(directory, key: keyA)) }
        let reopened = try await Self.encryptedNode(key: keyB, directory: directory)
        #expect(try await reopened.request("GET", "/db/", admin: true).json["doc_count"] == 200)
        // Decrypt it: the plain node opens it.
        try await reopened.request("POST", "/db/_rekey", json: ["decrypt": true], admin: true).expectStatus(200)
        await reopened.stop(keepingData: true)
        let plain = try await TestNode.start(persistent: true, directory: directory)
        #expect(try await plain.request("GET", "/db/", admin: true).json["doc_count"] == 200)
        await plain.stop()
    }

    static func configuration(_ directory: TemporaryDirectory, key: String) -> NodeConfiguration {
        var configuration = NodeConfiguration()
        configuration.publicAddress = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.adminAddress = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.dataDirectory = directory.path
        configuration.discovery = false
        var database = NodeConfiguration.Database(name: "db", durability: .normal)
        database.encryption = .keyFile(key)
        configuration.databases = [database]
        return configuration
    }

    static func run(_ arguments: [String], environment: [String: String]? = nil) async throws -> (Int32, String) {
        try await ShoalProcess.run(arguments, environment: environment)
    }

    /// A node process that has only ever opened plain databases encrypts one through the
    /// admin API (the encrypting VFS did not exist yet when it opened the file: its
    /// connections must still all be on one VFS, or SQLite reports a disk I/O error).
    @Test func aPlainNodeProcessEncryptsItsDatabaseThroughTheAdminAPI() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-plain-rekey")
        defer { directory.remove() }
        let keys = TemporaryDirectory(prefix: "shoal-keys")
        defer { keys.remove() }
        let key = try Self.keyFile(keys, "a")
        let node = try await ShoalProcess.start(dataDirectory: directory.path)
        for index in 0..<20 {
            #expect(try await node.request("PUT", "/db/d\(index)", body: Array("{\"i\":\(index)}".utf8)).status == 201)
        }
        let rekey = try await node.request("POST", "/db/_rekey", body: Array("{\"key_file\": \"\(key)\"}".utf8), admin: true)
        #expect(rekey.status == 200, "\(rekey.text)")
        #expect(try await node.request("PUT", "/db/after", body: Array("{\"a\":1}".utf8)).status == 201)
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
        let reopened = try await ShoalProcess.start(dataDirectory: directory.path, arguments: ["--encryption-key-file", key])
        #expect(try await reopened.request("GET", "/db/d7").json["i"] == 7)
        #expect(try await reopened.request("GET", "/db/after").json["a"] == 1)
        reopened.signal(SIGTERM)
        #expect(await reopened.waitForExit() == 0)
    }

    @Test func theCLIRefusesAWrongOrMissingKeyWithStatus64() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-enc")
        defer { directory.remove() }
        let keys = TemporaryDirectory(prefix: "shoal-keys")
        defer { keys.remove() }
        let keyA = try Self.keyFile(keys, "a")
        let keyB = try Self.keyFile(keys, "b")
        let passphrase = keys.path + "/pass"
        try Data("a long passphrase\n".utf8).write(to: URL(fileURLWithPath: passphrase))
        let node = try await ShoalProcess.start(dataDirectory: directory.path, arguments: ["--encryption-key-file", keyA])
        #expect(try await node.request("PUT", "/db/kept", body: Array("{\"a\":1}".utf8)).status == 201)
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
        let serve = ["serve", "--data", directory.path, "--interface", "127.0.0.1", "--port", "0", "--admin-port", "0", "--no-discovery"]

        var (status, text) = try await Self.run(serve + ["--encryption-key-file", keyB])
        #expect(status == 64)
        #expect(text.contains("wrong encryption key for database db"), "\(text)")
        (status, text) = try await Self.run(serve)
        #expect(status == 64)
        #expect(text.contains("database db: it is encrypted"), "\(text)")
        (status, text) = try await Self.run(serve + ["--encryption-passphrase-file", passphrase])
        #expect(status == 64)
        #expect(text.contains("wrong encryption key"), "\(text)")

        // Rotate to a passphrase given through the environment variable, offline.
        (status, text) = try await Self.run(["rekey", "--data", directory.path, "--old-key-file", keyA, "--new-passphrase-file", passphrase])
        #expect(status == 0, "\(text)")
        var environment = ProcessInfo.processInfo.environment
        environment[EncryptionSource.environmentVariable] = "a long passphrase"
        let withPassphrase = try await ShoalProcess.start(dataDirectory: directory.path, environment: environment)
        #expect(try await withPassphrase.request("GET", "/db/kept").json["a"] == 1)
        // The offline rekey refuses a database a running node has open.
        (status, text) = try await Self.run(["rekey", "--data", directory.path, "--old-passphrase-file", passphrase, "--new-key-file", keyA])
        #expect(status == 64)
        #expect(text.contains("has") && text.contains("open"), "\(text)")
        withPassphrase.signal(SIGTERM)
        #expect(await withPassphrase.waitForExit() == 0)

        // A plain database given a key says so.
        let plainDirectory = TemporaryDirectory(prefix: "shoal-plain")
        defer { plainDirectory.remove() }
        let plain = try await ShoalProcess.start(dataDirectory: plainDirectory.path)
        plain.signal(SIGTERM)
        #expect(await plain.waitForExit() == 0)
        (status, text) = try await Self.run(["serve", "--data", plainDirectory.path, "--port", "0", "--admin-port", "0", "--no-discovery", "--encryption-key-file", keyA])
        #expect(status == 64)
        #expect(text.contains("it is not encrypted"), "\(text)")
    }

    /// SIGKILL at a random moment of `shoal rekey`, again and again: the database always
    /// opens with exactly one of the two keys and holds every document.
    @Test func aKilledRekeyLeavesADatabaseThatOpensWithExactlyOneKey() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-enc")
        defer { directory.remove() }
        let keys = TemporaryDirectory(prefix: "shoal-keys")
        defer { keys.remove() }
        let keyFiles = [try Self.keyFile(keys, "a"), try Self.keyFile(keys, "b")]
        let secrets = try keyFiles.map { try EncryptionSource.keyFile($0).load() }
        let count = 20_000
        do {
            let store = try DocumentStore(configuration: StoreConfiguration(
                name: "db", location: .directory(directory.path), durability: .normal, encryption: secrets[0]))
            for batch in 0..<(count / 1000) {
                _ = try await store.save(batch: (0..<1000).map { index in
                    DocumentUpdate(docID: "d\(batch * 1000 + index)", body: ["n": .int(Int64(index)), "pad": .string(String(repeating: "x", count: 500))], mode: .edit(parent: nil))
                })
            }
            await store.close()
        }
        // How long a whole rekey takes here: the kills land anywhere within it.
        let clock = ContinuousClock()
        var (status, _) = (Int32(0), "")
        let duration = try await clock.measure {
            (status, _) = try await Self.run(["rekey", "--data", directory.path, "--old-key-file", keyFiles[0], "--new-key-file", keyFiles[1]])
        }
        #expect(status == 0)
        let window = Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
        var current = 1
        var generator = SystemRandomNumberGenerator()
        var completed = 0
        var killed = 0
        var switched = 0
        for _ in 0..<12 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ShoalProcess.executablePath)
            process.arguments = ["rekey", "--data", directory.path, "--old-key-file", keyFiles[current], "--new-key-file", keyFiles[1 - current]]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...window, using: &generator)))
            kill(process.processIdentifier, SIGKILL)
            _ = try await offThePool { process.waitUntilExit() }
            if process.terminationReason == .uncaughtSignal { killed += 1 } else { completed += 1 }

            var opened: [Int] = []
            for candidate in [0, 1] {
                do {
                    let store = try DocumentStore(configuration: StoreConfiguration(
                        name: "db", location: .directory(directory.path), durability: .normal, encryption: secrets[candidate]))
                    #expect(store.info().docCount == count)
                    #expect(try await store.integrityCheck() == ["ok"])
                    #expect(try await store.revision("d\(count - 1)").1.body?["n"] == .int(999))
                    await store.close()
                    opened.append(candidate)
                } catch let error as EncryptionError {
                    #expect(error.kind == .wrongKey, "\(error)")
                }
            }
            #expect(opened.count == 1, "opened with keys \(opened)")
            if let key = opened.first, key != current { switched += 1 }
            current = opened.first ?? current
        }
        print("rekey window \(window) ms: \(killed) killed (\(switched) of all runs ended on the new key), \(completed) completed")
        #expect(killed > 0)
    }

    @Test func anEncryptedNodeAndAPlainNodeConverge() async throws {
        let keys = TemporaryDirectory(prefix: "shoal-keys")
        defer { keys.remove() }
        let key = try Self.keyFile(keys, "a")
        let plain = try await TestNode.start(persistent: true)
        let encrypted = try await Self.encryptedNode(key: key, directory: TemporaryDirectory(prefix: "shoal-enc")) { configuration in
            configuration.heartbeat = .milliseconds(500)
            configuration.peers = ["ws://127.0.0.1:\(plain.ports.publicPort)/db"]
        }
        defer { Task { for node in [plain, encrypted] { await node.stop() } } }
        for (index, node) in [plain, encrypted].enumerated() {
            for doc in 0..<100 {
                try await node.request("PUT", "/db/n\(index)-\(doc)", json: ["from": .int(Int64(index))], admin: true).expectStatus(201)
            }
            try await node.request("PUT", "/db/att\(index)/blob.bin", raw: Array(repeating: UInt8(index + 1), count: 100_000),
                                   headers: ["Content-Type": "application/octet-stream"], admin: true).expectStatus(201)
        }
        let converged = try await eventually {
            let first = try await plain.request("GET", "/db/", admin: true).json["doc_count"]
            let second = try await encrypted.request("GET", "/db/", admin: true).json["doc_count"]
            return first == 202 && second == 202
        }
        #expect(converged)
        for node in [plain, encrypted] {
            for index in 0..<2 {
                let blob = try await node.request("GET", "/db/att\(index)/blob.bin", admin: true)
                #expect(blob.body == Array(repeating: UInt8(index + 1), count: 100_000))
            }
        }
        // The revisions are the same on both sides: encryption is local.
        let plainRev = try await plain.request("GET", "/db/n1-7", admin: true).json["_rev"]
        let encryptedRev = try await encrypted.request("GET", "/db/n1-7", admin: true).json["_rev"]
        #expect(plainRev == encryptedRev)
        #expect(encrypted.node.database(named: "db")?.isEncrypted == true)
    }
}
