import Foundation
import Testing
import TestSupport

/// The multi-host test against real avahi-daemons: runs `scripts/discovery-netns-test.sh`
/// with the `DiscoveryProbe` executable built beside this test bundle.
///
/// Skipped, with the reason printed, unless running as root with `ip`, `unshare`, `nft`,
/// `avahi-daemon` and `dbus-daemon` installed and the probe built (`swift build` builds it when
/// the package has the `DiscoveryProbe` target). On CI all of that holds, so it really runs.
@Suite("Discovery across simulated hosts (network namespaces)")
struct NetnsDiscoveryTests {
    static let tools = ["ip", "unshare", "nft", "avahi-daemon", "dbus-daemon"]

    /// Why the test cannot run here, or `nil` when it can.
    static func skipReason(probe: URL?, script: URL?) -> String? {
        guard getuid() == 0 else { return "not root" }
        for tool in tools where !isInstalled(tool) { return "\(tool) is not installed" }
        guard script != nil else { return "scripts/discovery-netns-test.sh not found" }
        guard probe != nil else { return "the DiscoveryProbe executable is not built" }
        return nil
    }

    static func isInstalled(_ tool: String) -> Bool {
        for directory in ["/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/sbin", "/usr/local/bin"]
        where FileManager.default.isExecutableFile(atPath: directory + "/" + tool) {
            return true
        }
        return false
    }

    /// `DiscoveryProbe` in the build folder of this test bundle.
    static func probeURL() -> URL? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("DiscoveryProbe")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// The script, found from this source file's location.
    static func scriptURL() -> URL? {
        let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let script = root.appendingPathComponent("scripts/discovery-netns-test.sh")
        return FileManager.default.fileExists(atPath: script.path) ? script : nil
    }

    @Test(.timeLimit(.minutes(3)))
    func threeHostsDiscoverEachOther() async throws {
        let probe = Self.probeURL()
        let script = Self.scriptURL()
        if let reason = Self.skipReason(probe: probe, script: script) {
            print("SKIPPED Discovery netns test: \(reason)")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script!.path]
        var environment = ProcessInfo.processInfo.environment
        environment["PROBE"] = probe!.path
        environment.removeValue(forKey: "DBUS_SYSTEM_BUS_ADDRESS")
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // Waited for off the cooperative pool (the script runs for a minute).
        let text = try await offThePool {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        print(text)
        if process.terminationStatus == 77 {
            print("SKIPPED Discovery netns test: the script skipped")
            return
        }
        #expect(process.terminationStatus == 0, "discovery-netns-test.sh failed:\n\(text)")
    }
}
