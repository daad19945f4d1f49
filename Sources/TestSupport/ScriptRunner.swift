import Foundation

/// Runs a script from the repository's `scripts/` folder as a subprocess for a test: its
/// output captured (and printed), stopped with SIGTERM after a timeout (the lab scripts
/// tear their lab down on it), the built `shoal` handed to it as `SHOAL_BIN`. Scripts
/// exit 0 (pass), 77 (cannot run here: the reason is in a `SKIP` line) or anything else
/// (fail).
public enum ScriptRunner {
    /// The repository root, found from this source file's location.
    public static let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A finished script.
    public struct Outcome: Sendable {
        public var status: Int32
        public var output: String

        /// nil when the script passed or skipped (the reason is printed); else the failure
        /// to record, with the end of the script's output.
        public func failure(_ script: String) -> String? {
            switch status {
            case 0:
                return nil
            case 77:
                let reason = output.split(separator: "\n").last { $0.contains("SKIP") } ?? "the script skipped"
                print("SKIPPED \(script): \(reason)")
                return nil
            default:
                return "\(script) failed (exit \(status)):\n\(output.suffix(6000))"
            }
        }
    }

    /// The `shoal` executable: beside this test bundle when `swift test` built it, else `.build/debug`.
    public static func nodeBinary() -> URL? {
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

    /// Runs `scripts/<script>` (blocking: call it off the cooperative pool); nil when the
    /// script does not exist. `environment` entries are added to this process's.
    public static func run(
        _ script: String, _ arguments: [String], timeout: TimeInterval, environment extra: [String: String] = [:]
    ) throws -> Outcome? {
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
        if environment["SHOAL_BIN"] == nil, let binary = nodeBinary() {
            environment["SHOAL_BIN"] = binary.path
        }
        environment.merge(extra) { _, new in new }
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
        let errorBox = DataBox()
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

    private final class DataBox: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        func set(_ d: Data) { lock.lock(); data = d; lock.unlock() }
        func get() -> Data { lock.lock(); defer { lock.unlock() }; return data }
    }
}
