import Foundation
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// One `shoal serve` process, as users run a node: the release binary of this checkout,
/// a data directory of its own, loopback listeners on ports the kernel picks, no mDNS.
///
/// `NodeProcess` owns the child process (stopped by its PID only), keep-alive HTTP
/// connections to its two ports, and reading what the process costs from `/proc`: CPU
/// seconds (user + system) and peak resident memory.
public final class NodeProcess: @unchecked Sendable {
    public let process: Process
    public let directory: TemporaryDirectory
    public let publicPort: Int
    public let adminPort: Int
    /// A keep-alive connection to the admin port.
    public let admin: KeepAliveHTTPClient
    private let output: Pipe

    /// The checkout's root (the package this benchmark package sits in).
    public static var rootDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    /// `SHOAL_BIN` when set (as for `scripts/mesh-lab`: a binary built with other
    /// flags, or an older build to compare), else `.build/release/shoal` of the
    /// checkout, built (or brought up to date) once per process with `make release`
    /// (the release binary as users get it: static Swift runtime, ordered code).
    public static func releaseBinary() throws -> String {
        if let binary = ProcessInfo.processInfo.environment["SHOAL_BIN"], !binary.isEmpty { return binary }
        return try builtBinary.get()
    }

    /// This process's environment without what `swift package benchmark` sets for its
    /// own process: `LD_PRELOAD` of its malloc-counting interposer (a Swift library that
    /// would load Swift's dynamic runtime into a node and count its every allocation) and
    /// `LD_LIBRARY_PATH`. A node runs as users start it.
    public static var userEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = nil
        environment["LD_LIBRARY_PATH"] = nil
        return environment
    }

    private static let builtBinary: Result<String, any Error> = Result {
        let root = rootDirectory.path
        let build = Process()
        build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        build.arguments = ["make", "-C", root, "release"]
        build.environment = userEnvironment
        build.standardOutput = FileHandle.standardError
        try build.run()
        build.waitUntilExit()
        guard build.terminationStatus == 0 else { throw BenchmarkFailure("make release failed") }
        return root + "/.build/release/shoal"
    }

    /// Starts a node serving database `db` with `arguments` added to `shoal serve`'s, on
    /// public port `port` (0: one the kernel picks).
    public static func start(_ label: String, port: Int = 0, arguments: [String] = []) async throws -> NodeProcess {
        let binary = try releaseBinary()
        let directory = try TemporaryDirectory(label)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["serve", "--data", directory.path, "--db", "db", "--interface", "127.0.0.1", "--port", String(port),
                             "--admin-port", "0", "--no-discovery"] + arguments
        process.environment = userEnvironment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let ports: (Int, Int)? = try await withCheckedThrowingContinuation { continuation in
            Thread {
                var text = ""
                var ports: (Int, Int)?
                while ports == nil {
                    let chunk = output.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                    ports = parsePorts(text)
                }
                continuation.resume(returning: ports)
            }.start()
        }
        guard let (publicPort, adminPort) = ports else {
            process.terminate()
            throw BenchmarkFailure("shoal serve did not start")
        }
        let admin = try await KeepAliveHTTPClient.connect(host: "127.0.0.1", port: adminPort)
        return NodeProcess(
            process: process, directory: directory, publicPort: publicPort, adminPort: adminPort, admin: admin, output: output)
    }

    private init(
        process: Process, directory: TemporaryDirectory, publicPort: Int, adminPort: Int, admin: KeepAliveHTTPClient, output: Pipe
    ) {
        self.process = process
        self.directory = directory
        self.publicPort = publicPort
        self.adminPort = adminPort
        self.admin = admin
        self.output = output
    }

    /// The node's database URL for a replicator.
    public var databaseURL: String { "ws://127.0.0.1:\(publicPort)/db" }

    /// Stops the process (SIGTERM, then SIGKILL after 5 s) and removes its data.
    public func stop() async {
        await admin.close()
        let pid = process.processIdentifier
        kill(pid, SIGTERM)
        for _ in 0..<500 where process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
        directory.remove()
    }

    /// CPU seconds the process has used (user + system), from `/proc/{pid}/stat`.
    public var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14 and stime 15 (1-based, whole line).
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Peak resident memory in MB (`VmHWM`).
    public var peakRSSMegabytes: Double { Self.status(process.processIdentifier, "VmHWM") / 1024 }

    /// Resident memory now in MB (`VmRSS`).
    public var rssMegabytes: Double { Self.status(process.processIdentifier, "VmRSS") / 1024 }

    private static func status(_ pid: Int32, _ field: String) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        return 0
    }

    /// The database's `doc_count`.
    public func documentCount() async throws -> Int {
        let response = try await admin.request(.GET, "/db/")
        guard let range = response.bodyString.range(of: #""doc_count":"#) else {
            throw BenchmarkFailure("GET /db/ answered \(response.status): \(response.bodyString.prefix(200))")
        }
        return Int(response.bodyString[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }

    /// Waits until the database holds `count` documents (polling every `interval`).
    public func waitForDocuments(_ count: Int, interval: Duration = .milliseconds(5), timeout: Duration = .seconds(600)) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await documentCount() < count {
            guard ContinuousClock.now < deadline else { throw BenchmarkFailure("timed out waiting for \(count) documents") }
            try await Task.sleep(for: interval)
        }
    }

    /// Writes new 1 KB sample documents with `_bulk_docs`, `perRequest` at a time.
    public func load(_ ids: [String], perRequest: Int = 1_000) async throws {
        for start in stride(from: 0, to: ids.count, by: perRequest) {
            let chunk = Array(ids[start..<min(start + perRequest, ids.count)])
            let response = try await admin.post("/db/_bulk_docs", json: BulkDocsRequest.body(ids: chunk))
            try BulkDocsRequest.check(response, count: chunk.count)
        }
    }

    /// `PUT /db/_replication/{id}` on this node.
    public func startReplication(_ id: String, definition: String) async throws {
        var body = ByteBuffer()
        body.writeString(definition)
        let response = try await admin.request(.PUT, "/db/_replication/\(id)", body: body)
        guard response.status.code < 300 else {
            throw BenchmarkFailure("PUT _replication answered \(response.status): \(response.bodyString.prefix(300))")
        }
    }

    /// `DELETE /db/_replication/{id}` on this node.
    public func removeReplication(_ id: String) async throws {
        _ = try await admin.request(.DELETE, "/db/_replication/\(id)")
    }

    /// A loopback port free now (bound and released), for nodes that must know each
    /// other's ports before they start (static peers).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchmarkFailure("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw BenchmarkFailure("bind() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func parsePorts(_ text: String) -> (Int, Int)? {
        func port(after marker: String) -> Int? {
            guard let range = text.range(of: marker) else { return nil }
            let rest = text[range.upperBound...]
            guard let colon = rest.firstIndex(of: ":"), let slash = rest[colon...].firstIndex(of: "/") else { return nil }
            return Int(rest[rest.index(after: colon)..<slash])
        }
        guard let publicPort = port(after: "public: http://"), let adminPort = port(after: "admin:  http://") else { return nil }
        return (publicPort, adminPort)
    }
}
