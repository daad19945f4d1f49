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
        let base = Replicate.base(admin)
        let response = try await Replicate.call("GET", "\(base)/\(db)/_peers")
        guard response.status == 200 else { throw ValidationError("the node answered \(response.status): \(response.json)") }
        if json {
            print(response.json.canonicalString)
            return
        }
        let inStep = response.json["in_step"]?.boolValue.map { $0 ? "in step with every peer" : "not in step" }
        print(["node \(response.json["node_id"]?.stringValue ?? "?")", "group \(response.json["group"]?.stringValue ?? "?")",
               response.json["last_seq"]?.intValue.map { "last_seq \($0)" }, inStep].compactMap { $0 }.joined(separator: "  "))
        let peers = response.json["peers"]?.arrayValue ?? []
        if peers.isEmpty { print("no peers") }
        for peer in peers {
            let id = peer["node_id"]?.stringValue ?? "-"
            let columns = [
                id, peer["role"]?.stringValue ?? "", peer["source"]?.stringValue ?? "", peer["state"]?.stringValue ?? "",
                peer["address"]?.stringValue ?? "", "pushed \(peer["docs_pushed"]?.intValue ?? 0)",
                "pulled \(peer["docs_pulled"]?.intValue ?? 0)", Self.step(peer), peer["last_error"]?.stringValue ?? "",
            ]
            print(columns.filter { !$0.isEmpty }.joined(separator: "  "))
        }
    }

    /// `in step`, or what is behind: `behind: send N docs / receive M docs` (`?` for a
    /// receive side not known).
    static func step(_ peer: JSON) -> String {
        if peer["in_step"]?.boolValue == true { return "in step" }
        let send = peer["pending_send"]?["documents"]?.intValue.map(String.init) ?? "?"
        let receive = peer["pending_receive"]?["documents"]?.intValue.map(String.init) ?? "?"
        return "behind: send \(send) docs / receive \(receive) docs"
    }
}
