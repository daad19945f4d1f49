import ArgumentParser
import DocumentModel
import Foundation

/// `shoal peers`: the mesh peers of a running node's database (admin API).
struct Peers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the mesh peers of a running node.")

    @Option(name: .long, help: "Database (default: db).")
    var db = "db"

    @Option(name: .long, help: "The node's admin URL.")
    var admin = "http://127.0.0.1:4985"

    @Flag(name: .long, help: "Print the raw JSON.")
    var json = false

    func run() async throws {
        let base = admin.hasSuffix("/") ? String(admin.dropLast()) : admin
        let response = try await Replicate.call("GET", "\(base)/\(db)/_peers")
        guard response.status == 200 else { throw ValidationError("the node answered \(response.status): \(response.json)") }
        if json {
            print(response.json.canonicalString)
            return
        }
        print("node \(response.json["node_id"]?.stringValue ?? "?")  group \(response.json["group"]?.stringValue ?? "?")")
        let peers = response.json["peers"]?.arrayValue ?? []
        if peers.isEmpty { print("no peers") }
        for peer in peers {
            let id = peer["node_id"]?.stringValue ?? "-"
            let columns = [
                id, peer["role"]?.stringValue ?? "", peer["source"]?.stringValue ?? "", peer["state"]?.stringValue ?? "",
                peer["address"]?.stringValue ?? "", "pushed \(peer["docs_pushed"]?.intValue ?? 0)",
                "pulled \(peer["docs_pulled"]?.intValue ?? 0)", peer["last_error"]?.stringValue ?? "",
            ]
            print(columns.filter { !$0.isEmpty }.joined(separator: "  "))
        }
    }
}
