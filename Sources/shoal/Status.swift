import ArgumentParser
import DocumentModel
import Foundation
import ShoalNode

/// `shoal status`: a running node at a glance, for operators and scripts — the node, its
/// databases, its mesh peers and whether each database is in step with them (admin API:
/// `GET /_mesh` and `GET /{db}/_peers`). Exit status (docs/operations.md): 0 every
/// database in step, 1 some database behind or a peer link down, 2 the node answered
/// with an error, 3 the node does not answer; `--wait` waits for 0.
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a running node: its databases, mesh peers, and whether each is in step.",
        discussion: """
            Exit status: 0 every database is in step with its peers, 1 some database is not \
            (changes pending, or a peer link down), 2 the node answered with an error, 3 the \
            node does not answer.
            """)

    @Option(name: .long, help: "The node's admin URL (default: from --config, else http://127.0.0.1:4985).")
    var admin: String?

    @Option(name: .long, help: "The node's config file: its adminInterface gives the admin URL.")
    var config: String?

    @Option(name: .long, help: "Wait up to this many seconds for every database to be in step.")
    var wait: Double?

    @Flag(name: .long, help: "Print one JSON object (node, databases with their peers, in_step).")
    var json = false

    static let exitNotInStep: Int32 = 1
    static let exitError: Int32 = 2
    static let exitUnreachable: Int32 = 3

    func run() async throws {
        let base = try adminBase()
        let deadline = ContinuousClock.now + .milliseconds(Int((wait ?? 0) * 1000))
        var report: StatusReport
        while true {
            report = await StatusReport.fetch(admin: base)
            if report.exitStatus == 0 || wait == nil || ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        print(json ? report.json.canonicalString : report.text)
        if report.exitStatus != 0 { throw ExitCode(report.exitStatus) }
    }

    /// The admin URL without a trailing slash.
    private func adminBase() throws -> String {
        var url = admin ?? "http://127.0.0.1:4985"
        if admin == nil, let config {
            let loaded: ConfigLoader.Loaded
            do { loaded = try ConfigLoader.load(path: config) } catch { throw ValidationError("\(config): \(error)") }
            let address = loaded.configuration.adminAddress
            let host = ServiceSupervision.reachable(address.host)
            url = "http://\(host):\(address.port)"
        }
        return Replicate.base(url)
    }
}

/// One reading of a node's state: what `shoal status` prints and its exit status.
struct StatusReport {
    var json: JSON
    var text: String
    var exitStatus: Int32

    /// Reads `/_mesh` and each mesh database's `/_peers`.
    static func fetch(admin base: String) async -> StatusReport {
        let mesh: (status: Int, json: JSON)
        do {
            mesh = try await Replicate.call("GET", "\(base)/_mesh")
        } catch {
            let reason = "the node at \(base) does not answer: \(error)"
            return StatusReport(json: ["error": "unreachable", "reason": .string(reason)], text: reason,
                                exitStatus: Status.exitUnreachable)
        }
        guard mesh.status == 200 else {
            let reason = "the node at \(base) answered \(mesh.status): \(mesh.json.canonicalString)"
            return StatusReport(json: ["error": .string("http_\(mesh.status)"), "reason": .string(reason)], text: reason,
                                exitStatus: Status.exitError)
        }
        var peersByDatabase: [String: JSON] = [:]
        for group in mesh.json["meshes"]?.arrayValue ?? [] {
            guard let name = group["database"]?.stringValue else { continue }
            if let answer = try? await Replicate.call("GET", "\(base)/\(name)/_peers"), answer.status == 200 {
                peersByDatabase[name] = answer.json
            }
        }
        return make(mesh: mesh.json, peers: peersByDatabase)
    }

    /// The report from `/_mesh` and each database's `/_peers` answer (pure).
    static func make(mesh: JSON, peers: [String: JSON]) -> StatusReport {
        let node = mesh["node"] ?? [:]
        let meshDatabases = Set((mesh["meshes"]?.arrayValue ?? []).compactMap { $0["database"]?.stringValue })
        let names = (node["databases"]?.arrayValue ?? []).compactMap(\.stringValue)
        var lines = [
            "node \(mesh["node_id"]?.stringValue ?? "?")  Shoal \(node["version"]?.stringValue ?? "?")  "
                + "up \(node["uptime_seconds"]?.intValue ?? 0) s  discovery \(mesh["discovery"]?.stringValue ?? "?")",
            "  public \(node["addresses"]?["public"]?.stringValue ?? "?")  admin \(node["addresses"]?["admin"]?.stringValue ?? "?")",
        ]
        var databases: [JSON] = []
        var allInStep = true
        for name in names.sorted() {
            guard meshDatabases.contains(name), let answer = peers[name] else {
                lines.append("\(name): not in the mesh")
                databases.append(["name": .string(name), "mesh": false, "in_step": true])
                continue
            }
            let list = answer["peers"]?.arrayValue ?? []
            let inStep = Self.databaseInStep(answer)
            allInStep = allInStep && inStep
            let connected = list.filter { Self.isLinked($0) }.count
            lines.append("\(name): \(inStep ? "in step" : "NOT in step")  \(connected)/\(list.count) peers linked"
                + (answer["last_seq"].map { "  last_seq \($0.canonicalString)" } ?? ""))
            if list.isEmpty { lines.append("  no peers") }
            for peer in list { lines.append("  " + Self.peerLine(peer)) }
            databases.append(["name": .string(name), "mesh": true, "in_step": .bool(inStep), "peers": .array(list)])
        }
        let json: JSON = [
            "node_id": mesh["node_id"] ?? .null, "node": node, "discovery": mesh["discovery"] ?? .null,
            "databases": .array(databases), "in_step": .bool(allInStep),
        ]
        return StatusReport(json: json, text: lines.joined(separator: "\n"), exitStatus: allInStep ? 0 : Status.exitNotInStep)
    }

    /// A database is in step when the node says so; a node without the report (older
    /// than the field) counts as in step only with every peer connected and nothing behind.
    static func databaseInStep(_ answer: JSON) -> Bool {
        if let flag = answer["in_step"]?.boolValue { return flag }
        return (answer["peers"]?.arrayValue ?? []).allSatisfy {
            isLinked($0) && ($0["sequences_behind"]?.intValue ?? 0) == 0
        }
    }

    /// A peer with a live link: an accepted connection (`connected`) or a dialed
    /// replication that is `running` or `idle`.
    static func isLinked(_ peer: JSON) -> Bool {
        ["connected", "running", "idle"].contains(peer["state"]?.stringValue ?? "")
    }

    /// `node-id  connected  in step` or `… behind: send 3 docs, receive 1 docs`.
    static func peerLine(_ peer: JSON) -> String {
        let id = peer["node_id"]?.stringValue ?? peer["address"]?.stringValue ?? "?"
        let state = peer["state"]?.stringValue ?? "?"
        var words = [id, state]
        if let inStep = peer["in_step"]?.boolValue {
            if inStep {
                words.append("in step")
            } else {
                let send = peer["pending_send"]?["documents"]?.intValue
                let receive = peer["pending_receive"]?["documents"]?.intValue
                var behind = "behind"
                if send != nil || receive != nil {
                    behind += ": send \(send.map(String.init) ?? "?") docs, receive \(receive.map(String.init) ?? "?") docs"
                }
                words.append(behind)
            }
        }
        if let error = peer["last_error"]?.stringValue, !isLinked(peer) { words.append("(\(error))") }
        return words.joined(separator: "  ")
    }
}
