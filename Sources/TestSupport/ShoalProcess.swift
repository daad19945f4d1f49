import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The `shoal` executable run as a child process (for crash and signal tests): it
/// is started with loopback ports chosen by the kernel, killed by its PID only, and dies
/// with the test process (`ChildSpawner`).
public final class ShoalProcess: @unchecked Sendable {
    public let process: Process
    public let publicPort: Int
    public let adminPort: Int
    private let output: Pipe

    /// The `shoal` binary built next to the test bundle.
    public static var executablePath: String {
        let testBinary = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: testBinary).deletingLastPathComponent()
        if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
        return directory.appendingPathComponent("shoal").path
    }

    /// Runs the `shoal` binary with `arguments` to its end (off the concurrency pool);
    /// returns its exit status and what it wrote on standard error.
    public static func run(_ arguments: [String], environment: [String: String]? = nil) async throws -> (status: Int32, errors: String) {
        let process = Process()
        ChildSpawner.prepare(process, executable: executablePath, arguments: arguments, environment: environment)
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try ChildSpawner.shared.run(process)
        let text = try await offThePool {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        return (process.terminationStatus, text)
    }

    /// Starts `shoal serve` on `dataDirectory` and waits until it prints its ports.
    public static func start(
        dataDirectory: String, arguments: [String] = [], environment: [String: String]? = nil, timeout: TimeInterval = 30
    ) async throws -> ShoalProcess {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result {
                    try ShoalProcess(dataDirectory: dataDirectory, arguments: arguments, environment: environment, timeout: timeout)
                })
            }.start()
        }
    }

    private init(dataDirectory: String, arguments: [String], environment: [String: String]?, timeout: TimeInterval) throws {
        process = Process()
        ChildSpawner.prepare(process, executable: Self.executablePath, arguments: [
            "serve", "--data", dataDirectory, "--interface", "127.0.0.1", "--port", "0", "--admin-port", "0", "--no-discovery",
        ] + arguments, environment: environment)
        output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try ChildSpawner.shared.run(process)
        var text = ""
        let deadline = Date().addingTimeInterval(timeout)
        var ports: (Int, Int)?
        while ports == nil && Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            ports = Self.parsePorts(text)
        }
        guard let (publicPort, adminPort) = ports else {
            process.terminate()
            throw HTTPTestClient.Failure(description: "shoal did not start: \(text)")
        }
        self.publicPort = publicPort
        self.adminPort = adminPort
    }

    private static func parsePorts(_ text: String) -> (Int, Int)? {
        func port(after marker: String) -> Int? {
            guard let range = text.range(of: marker) else { return nil }
            let rest = text[range.upperBound...]
            guard let colon = rest.firstIndex(of: ":"), let slash = rest[colon...].firstIndex(of: "/") else { return nil }
            return Int(rest[rest.index(after: colon)..<slash])
        }
        guard let publicPort = port(after: "public: http://"), let adminPort = port(after: "admin:  http://") else {
            return nil
        }
        return (publicPort, adminPort)
    }

    /// Sends a signal to this process (by its PID).
    public func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the process to exit and returns its exit code, or the signal that
    /// ended it (as `Process.terminationStatus` does).
    /// A child that crashed before (say, before the test killed it) fails the test with
    /// its backtrace.
    public func waitForExit() async -> Int32 {
        let process = self.process
        let status = (try? await offThePool { Self.exitStatus(of: process) }) ?? -1
        if let report = ChildSpawner.crashReport(pid: process.processIdentifier) {
            Issue.record("the shoal child \(process.processIdentifier) crashed (exit status \(status)):\n\(report)")
        }
        return status
    }

    /// Polls: Foundation's own record once it has reaped the child, else the child's
    /// state seen with `waitid(WNOWAIT)`, which leaves it for Foundation to reap.
    /// `Process.waitUntilExit` alone waits for the child's end of a socket pair to
    /// close, and a crashing child's `swift-backtrace` inherits that end and can
    /// outlive the child by minutes: the wait then spun until the test run was killed.
    static func exitStatus(of process: Process) -> Int32 {
        let pid = process.processIdentifier
        while true {
            if !process.isRunning { return process.terminationStatus }
            var info = siginfo_t()
            if waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT | WNOHANG) == 0, info._sifields._sigchld.si_pid == pid {
                return info._sifields._sigchld.si_status
            }
            usleep(10_000)
        }
    }

    public func request(
        _ method: String, _ path: String, body: [UInt8]? = nil, admin: Bool = false
    ) async throws -> HTTPResult {
        try await HTTPTestClient.send(
            port: admin ? adminPort : publicPort, method: method, path: path,
            headers: body == nil ? [:] : ["Content-Type": "application/json"], body: body, timeout: 10)
    }
}
