import DocumentModel
import Foundation

/// Debian's `chromium`, headless, started for one test and driven over the DevTools
/// protocol (`DevToolsConnection`). The DevTools port is the one Chromium chose
/// (`--remote-debugging-port=0`), read from `DevToolsActivePort` in its profile
/// directory.
public final class HeadlessChromium: @unchecked Sendable {
    /// Chromium is not installed or did not start; the reason says why.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    private let process: Process
    private let profile: TemporaryDirectory
    /// The browser's DevTools WebSocket (`ws://127.0.0.1:<port>/devtools/browser/<id>`).
    public let devToolsURL: String

    private init(process: Process, profile: TemporaryDirectory, devToolsURL: String) {
        self.process = process
        self.profile = profile
        self.devToolsURL = devToolsURL
    }

    /// The executable: `$SHOAL_CHROMIUM`, else `chromium` on the `PATH`.
    static var executable: String? {
        if let given = ProcessInfo.processInfo.environment["SHOAL_CHROMIUM"] { return given }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/chromium" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts Chromium on `about:blank`; throws `Unavailable` when it cannot.
    public static func launch(timeout: Duration = .seconds(20)) async throws -> HeadlessChromium {
        guard let executable else { throw Unavailable(description: "chromium is not installed (make deps installs it)") }
        let profile = TemporaryDirectory(prefix: "shoal-chromium")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            // The WebSocket client sends `Origin: ws://127.0.0.1`, which DevTools refuses
            // unless it is allowed.
            "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
            "--remote-allow-origins=ws://127.0.0.1",
            "--user-data-dir=\(profile.path)", "--no-first-run", "--no-default-browser-check",
            "--disable-dev-shm-usage", "--disable-extensions",
            // No crashpad handler: it outlives the browser it watches (reparented to init).
            "--disable-crash-reporter", "--disable-breakpad", "about:blank",
        ]
        let log = profile.path + "/chromium.log"
        guard FileManager.default.createFile(atPath: log, contents: nil) else {
            throw DevToolsConnection.Failure(description: "cannot create \(log)")
        }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = output
        process.standardError = output
        do {
            try process.run()
        } catch {
            profile.remove()
            throw Unavailable(description: "cannot start \(executable): \(error)")
        }
        let portFile = profile.path + "/DevToolsActivePort"
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8) {
                let lines = text.split(separator: "\n")
                if lines.count >= 2, let port = Int(lines[0]) {
                    return HeadlessChromium(process: process, profile: profile, devToolsURL: "ws://127.0.0.1:\(port)\(lines[1])")
                }
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let printed = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        profile.remove()
        throw Unavailable(description: "chromium did not open its DevTools port: \(printed.suffix(2000))")
    }

    /// Launches Chromium for `test`, or prints why the test is skipped (no browser that
    /// starts here) and returns nil.
    public static func launchOrSkip(_ test: String) async throws -> HeadlessChromium? {
        do {
            return try await launch()
        } catch let unavailable as Unavailable {
            print("\(test) skipped: \(unavailable)")
            return nil
        }
    }

    /// Opens a new page (tab), runs `body` with it, and closes it.
    public func withPage<T: Sendable>(_ body: @escaping @Sendable (DevToolsPage) async throws -> T) async throws -> T {
        try await DevToolsConnection.connect(url: devToolsURL) { connection in
            let target = try await connection.send("Target.createTarget", ["url": "about:blank"])
            guard let targetID = target["targetId"]?.stringValue else { throw DevToolsConnection.Failure(description: "no targetId in \(target)") }
            let attached = try await connection.send("Target.attachToTarget", ["targetId": .string(targetID), "flatten": true])
            guard let sessionID = attached["sessionId"]?.stringValue else {
                throw DevToolsConnection.Failure(description: "no sessionId in \(attached)")
            }
            let page = DevToolsPage(connection: connection, sessionID: sessionID)
            try await connection.send("Runtime.enable", sessionID: sessionID)
            try await connection.send("Page.enable", sessionID: sessionID)
            let result = try await body(page)
            _ = try? await connection.send("Target.closeTarget", ["targetId": .string(targetID)], timeout: .seconds(5))
            return result
        }
    }

    /// Stops the browser (the process this object started) and removes its profile.
    public func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        profile.remove()
    }
}
