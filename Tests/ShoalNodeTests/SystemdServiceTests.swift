import Foundation
import Testing
import TestSupport

/// `shoal serve` under systemd's protocols, as a child process: `Type=notify` readiness
/// (READY=1 once both ports answer), the watchdog at the interval systemd sets,
/// STOPPING=1 on SIGTERM, and journal-formatted logs when stderr is the journal's stream.
struct SystemdServiceTests {
    private static func environment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "JOURNAL_STREAM")
        environment.removeValue(forKey: "NOTIFY_SOCKET")
        environment.merge(extra) { $1 }
        return environment
    }

    @Test func readyAfterBothPortsAnswerThenWatchdogThenStoppingOnSIGTERM() async throws {
        let socket = try NotifySocket()
        let directory = TemporaryDirectory(prefix: "shoal-notify")
        // WatchdogSec=2s: a ping every second.
        let node = try await ShoalProcess.start(
            dataDirectory: directory.path,
            environment: Self.environment(["NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "2000000"]))
        #expect(await eventually(timeout: .seconds(20)) { !socket.messages(with: "READY=1").isEmpty })
        // The moment READY=1 is there, both ports answer.
        let publicAnswer = try await node.request("GET", "/")
        let adminAnswer = try await node.request("GET", "/", admin: true)
        #expect(publicAnswer.status == 200)
        #expect(adminAnswer.status == 200)
        let ready = try #require(socket.messages(with: "READY=1").first)
        #expect(ready.text.contains("STATUS=serving db"))
        #expect(ready.text.contains("MAINPID=\(node.process.processIdentifier)"))

        #expect(await eventually(timeout: .seconds(30)) { socket.messages(with: "WATCHDOG=1").count >= 5 })
        let pings = socket.messages(with: "WATCHDOG=1").map(\.arrived)
        #expect(pings.first! > ready.arrived)
        let gaps = zip(pings.dropFirst(), pings).map { ($0 - $1) }.sorted()
        let median = gaps[gaps.count / 2]
        // Half of WatchdogSec: well inside systemd's deadline, and not a flood.
        #expect(median >= .milliseconds(700) && median <= .milliseconds(1600), "gaps \(gaps)")

        #expect(socket.messages(with: "STOPPING=1").isEmpty)
        node.signal(SIGTERM)
        let status = await node.waitForExit()
        #expect(status == 0)
        let stopping = try #require(socket.messages(with: "STOPPING=1").first)
        #expect(stopping.arrived > pings.last!)
        #expect(socket.messages(with: "READY=1").count == 1)
    }

    @Test func withoutNotifySocketTheNodeRunsAsBefore() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-notify")
        let node = try await ShoalProcess.start(dataDirectory: directory.path, environment: Self.environment([:]))
        #expect(try await node.request("GET", "/", admin: true).status == 200)
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    @Test(arguments: [true, false]) func logsCarryJournalPrioritiesOnlyOnTheJournalStream(journal: Bool) async throws {
        let directory = TemporaryDirectory(prefix: "shoal-journal")
        let errors = Pipe()
        var info = stat()
        #expect(fstat(errors.fileHandleForWriting.fileDescriptor, &info) == 0)
        // Another file's identity (a child that inherited the variable but writes elsewhere).
        let stream = journal ? "\(info.st_dev):\(info.st_ino)" : "\(info.st_dev):\(info.st_ino &+ 1)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ShoalProcess.executablePath)
        process.arguments = ["serve", "--data", directory.path, "--interface", "127.0.0.1", "--port", "0",
                             "--admin-port", "0", "--no-discovery", "--log", "*"]
        process.environment = Self.environment(["JOURNAL_STREAM": stream])
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = try await offThePool { () -> String in
            var text = ""
            while !text.contains("admin:") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text
        }
        #expect(printed.contains("admin:"))
        kill(process.processIdentifier, SIGTERM)
        try errors.fileHandleForWriting.close()
        let logged = try await offThePool { () -> String in
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        let lines = logged.split(separator: "\n")
        #expect(!lines.isEmpty)
        if journal {
            // `<N>Key: message`: a syslog priority journald reads, no timestamp of our own.
            for line in lines { #expect(line.wholeMatch(of: /<[2-7]>[A-Za-z]+: .*/) != nil, "\(line)") }
            #expect(lines.contains { $0.hasPrefix("<6>") })
        } else {
            for line in lines { #expect(line.wholeMatch(of: /\d{4}-\d{2}-\d{2}T[0-9:.]+Z \[[A-Z]{3}\] .*/) != nil, "\(line)") }
        }
    }
}
