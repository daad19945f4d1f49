import ArgumentParser
import BLIP
import DocumentModel
import Foundation

/// `shoal replicate`: starts a replication on a running node through its admin API
/// and, for a one-shot run, shows progress until it ends.
struct Replicate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replicate a database of a running node with a remote one (through the admin API).")

    @Option(name: .long, help: "Local database (default: db).")
    var db = "db"

    @Option(name: .long, help: "Remote database URL, e.g. ws://host:4984/db or http://host:4984/db.")
    var remote: String

    @Flag(name: .long, help: "Push only.")
    var push = false

    @Flag(name: .long, help: "Pull only.")
    var pull = false

    @Flag(name: .long, help: "Keep replicating; return once it is started.")
    var continuous = false

    @Option(name: .long, help: "Replication ID (default: generated).")
    var id: String?

    @Option(name: .long, help: "The node's admin URL.")
    var admin = "http://127.0.0.1:4985"

    @Option(name: .customLong("remote-username"), help: "User name on the remote node.")
    var remoteUsername: String?

    @Option(name: .customLong("remote-password"), help: "Password on the remote node.")
    var remotePassword: String?

    @Option(name: .customLong("pinned-cert"), help: "For wss://: the server's certificate (PEM file) to accept instead of the system's trust roots.")
    var pinnedCert: String?

    func validate() throws {
        if push && pull { throw ValidationError("use --push or --pull (or neither for both), not both") }
    }

    func run() async throws {
        let replicationID = id ?? "cli-\(UUID().uuidString.prefix(8).lowercased())"
        var definition: [String: JSON] = [
            "remote": .string(remote),
            "direction": .string(push ? "push" : pull ? "pull" : "pushAndPull"),
            "continuous": .bool(continuous),
        ]
        if let remoteUsername { definition["remote_username"] = .string(remoteUsername) }
        if let remotePassword { definition["remote_password"] = .string(remotePassword) }
        if let pinnedCert {
            // The node reads the file: give it an absolute path.
            let path = pinnedCert.hasPrefix("/") ? pinnedCert : FileManager.default.currentDirectoryPath + "/" + pinnedCert
            definition["pinned_cert"] = .string(path)
        }
        let base = Self.base(admin)
        let created = try await Self.call("PUT", "\(base)/\(db)/_replication/\(replicationID)", body: .object(definition))
        guard created.status == 201 else { throw ValidationError("the node refused the replication: \(created.json)") }
        if continuous {
            print("continuous replication \(replicationID) started; status: \(base)/\(db)/_replicationStatus/\(replicationID)")
            return
        }
        var last = ""
        while true {
            try await Task.sleep(for: .milliseconds(250))
            let status = try await Self.call("GET", "\(base)/\(db)/_replicationStatus/\(replicationID)").json
            let line = Self.progressLine(status)
            if line != last {
                print(line)
                last = line
            }
            let state = status["status"]?.stringValue ?? ""
            if state == "stopped" || state == "error" {
                _ = try? await Self.call("DELETE", "\(base)/\(db)/_replication/\(replicationID)")
                if state == "error" { throw ExitCode.failure }
                return
            }
        }
    }

    static func progressLine(_ status: JSON) -> String {
        func number(_ key: String) -> Int64 { status[key]?.intValue ?? 0 }
        var line = "\(status["status"]?.stringValue ?? "?"): pushed \(number("docs_pushed"))/\(number("docs_checked_push"))"
            + ", pulled \(number("docs_pulled"))/\(number("docs_checked_pull"))"
        let failed = number("docs_failed_push") + number("docs_failed_pull")
        if failed > 0 { line += ", failed \(failed)" }
        if let error = status["error_message"]?.stringValue { line += " — \(error)" }
        return line
    }

    /// An admin URL without its trailing slash, for appending paths.
    static func base(_ url: String) -> String {
        url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    static func call(_ method: String, _ url: String, body: JSON? = nil) async throws -> (status: Int, json: JSON) {
        guard let target = URL(string: url) else { throw ValidationError("bad URL \(url)") }
        let request = PeerHTTPRequest(
            method: method, url: target, headers: body == nil ? [] : [("Content-Type", "application/json")],
            body: body?.canonicalBytes(), timeout: .seconds(30))
        let response = try await request.send()
        return (response.status, (try? JSON.parse(response.body)) ?? .null)
    }
}
