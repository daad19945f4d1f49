import Foundation
import Testing
import TestSupport

/// The mesh across simulated hosts (network namespaces with their own avahi-daemon, built by
/// `scripts/netlab`): runs `scripts/mesh-netns-test.sh` (real mDNS discovery, join, kill and
/// partition timings) and a short `scripts/chaos` run (random writers and a seeded nemesis, then
/// convergence and the acknowledged-writes ledger) as subprocesses.
///
/// Each script exits 0 (pass), 1 (fail: recorded as an issue with the script's output) or 77
/// (cannot run here: not root, `ip`/`nft`/`avahi-daemon`/`dbus-daemon` missing, node binary not
/// built); on 77 the reason is printed and the test returns. This test itself only starts the
/// scripts; everything they run on the network runs inside the lab's namespaces.
@Suite("Mesh across simulated hosts (network namespaces)", .serialized, .timeLimit(.minutes(5)))
struct NetnsMeshTests {
    /// The repository root, found from this source file's location.
    static let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `shoal` executable: beside this test bundle when `swift test` built it, else `.build/debug`.
    static func nodeBinary() -> URL? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("shoal")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate.path)
            {
                return candidate
            }
            directory = directory.deletingLastPathComponent()
        }
        let fallback = root.appendingPathComponent(".build/debug/shoal")
        return FileManager.default.isExecutableFile(atPath: fallback.path) ? fallback : nil
    }

    struct Outcome {
        var status: Int32
        var output: String
    }

    /// Runs a script from `scripts/` with its stdout and stderr captured (and printed), stopping
    /// it with SIGTERM (the scripts tear their lab down on it) after `timeout` seconds.
    static func run(_ script: String, _ arguments: [String], timeout: TimeInterval) throws -> Outcome? {
        let url = root.appendingPathComponent("scripts/\(script)")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            print("SKIPPED \(script): \(url.path) not found")
            return nil
        }
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        process.currentDirectoryURL = root
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DBUS_SYSTEM_BUS_ADDRESS")
        environment.removeValue(forKey: "NETLAB_DIR")       // each script makes a fresh lab of its own
        // The suite runs these beside hundreds of other tests on two cores: the scripts'
        // timing targets (measurements, see docs/netlab.md) get twice the time here;
        // convergence and the ledger stay strict.
        if environment["MESH_TEST_FACTOR"] == nil { environment["MESH_TEST_FACTOR"] = "2" }
        if environment["SHOAL_BIN"] == nil, let binary = nodeBinary() {
            environment["SHOAL_BIN"] = binary.path
        }
        process.environment = environment
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try process.run()

        let watchdog = DispatchWorkItem { [process] in
            if process.isRunning {
                print("\(script): still running after \(Int(timeout))s: SIGTERM")
                process.terminate()
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        // Read stderr on another thread so that neither pipe can fill up and block the script.
        let errorBox = ErrorBox()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errorBox.set(stderr.fileHandleForReading.readDataToEndOfFile())
            group.leave()
        }
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        watchdog.cancel()
        let text = String(decoding: out, as: UTF8.self)
        let errors = String(decoding: errorBox.get(), as: UTF8.self)
        print(text)
        if !errors.isEmpty { print("--- \(script) stderr:\n\(errors)") }
        return Outcome(status: process.terminationStatus, output: text + (errors.isEmpty ? "" : "\n--- stderr:\n" + errors))
    }

    final class ErrorBox: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        func set(_ d: Data) { lock.lock(); data = d; lock.unlock() }
        func get() -> Data { lock.lock(); defer { lock.unlock() }; return data }
    }

    /// Handles the exit status: 0 passes, 77 prints the skip reason, anything else is an issue.
    static func judge(_ script: String, _ outcome: Outcome?) {
        guard let outcome else { return }
        switch outcome.status {
        case 0:
            return
        case 77:
            let reason = outcome.output.split(separator: "\n").last { $0.contains("SKIP") } ?? "the script skipped"
            print("SKIPPED \(script): \(reason)")
        default:
            Issue.record("\(script) failed (exit \(outcome.status)):\n\(outcome.output.suffix(6000))")
        }
    }

    // The scripts run for minutes: they are waited for off the cooperative pool.
    @Test func discoveryJoinKillAndPartitionTimings() async throws {
        Self.judge("mesh-netns-test.sh", try await offThePool { try Self.run("mesh-netns-test.sh", [], timeout: 150) })
    }

    @Test func shortChaosRunConvergesWithoutLostWrites() async throws {
        let arguments = ["--nodes", "3", "--duration", "40", "--seed", "1"]
        Self.judge("chaos", try await offThePool { try Self.run("chaos", arguments, timeout: 240) })
    }
}
