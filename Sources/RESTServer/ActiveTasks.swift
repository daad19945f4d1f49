import DocumentModel
import Foundation

/// `GET /_active_tasks` (admin port): the node's running replications in CouchDB's
/// shape, for the tools that list a CouchDB server's tasks (Fauxton's Active Tasks,
/// scripts that wait for a replication). A one-shot replication that finished, or one
/// stopped or failed, is not active and is not listed (`/{db}/_replicationStatus`
/// keeps its status). Sync Gateway's own fields come along: `status`, `direction`.
enum ActiveTasks {
    /// The task of every running replication of `databases`, by database then ID.
    static func list(databases: [String], controller: any ReplicationController, now: Date = Date()) -> JSON {
        var tasks: [JSON] = []
        for database in databases.sorted() {
            let definitions = controller.replicationDefinitions(database: database)
            for (id, status) in controller.replicationStatuses(database: database).sorted(by: { $0.key < $1.key }) {
                let state = status["status"]?.stringValue ?? ""
                guard !["stopped", "error"].contains(state) else { continue }
                tasks.append(task(database: database, id: id, status: status, definition: definitions[id] ?? [:], now: now))
            }
        }
        return .array(tasks)
    }

    /// One replication as a CouchDB replication task.
    static func task(database: String, id: String, status: JSON, definition: JSON, now: Date) -> JSON {
        func count(_ key: String) -> Int64 { Int64(status[key]?.intValue ?? 0) }
        let direction = definition["direction"]?.stringValue ?? "pushAndPull"
        let remote = JSON.string(definition["remote"]?.stringValue ?? "")
        let local = JSON.string(database)
        let pulls = direction == "pull"
        let read = count("docs_pushed") + count("docs_pulled")
        var task: [String: JSON] = [
            "type": "replication",
            "database": local,
            "replication_id": .string(id),
            "doc_id": .string(id),
            "pid": .string("<\(database)/\(id)>"),
            "source": pulls ? remote : local,
            "target": pulls ? local : remote,
            "direction": .string(direction),
            "continuous": .bool(definition["continuous"]?.boolValue ?? false),
            "status": .string(status["status"]?.stringValue ?? ""),
            "revisions_checked": .int(count("docs_checked_push") + count("docs_checked_pull")),
            "missing_revisions_found": .int(read + count("docs_failed_push") + count("docs_failed_pull")),
            "docs_read": .int(read),
            "docs_written": .int(read),
            "doc_write_failures": .int(count("docs_failed_push") + count("docs_failed_pull")),
            "started_on": status["started_on"] ?? .int(Int64(now.timeIntervalSince1970)),
            "updated_on": .int(Int64(now.timeIntervalSince1970)),
        ]
        if let error = status["error_message"] { task["error_message"] = error }
        return .object(task)
    }
}
