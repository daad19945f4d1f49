import DocumentModel
import DocumentStore
import JSEngine

extension ShoalNode {
    /// The `js` conflict function of a database, compiled (nil when it has none).
    /// Bad JavaScript fails the node's start with the line and Duktape's message.
    static func conflictScript(for database: NodeConfiguration.Database) throws -> (any ConflictScript)? {
        guard let source = database.conflictResolver else { return nil }
        do {
            return try JSConflictScript(source: source)
        } catch {
            throw ConfigLoader.ConfigError(message: "database \"\(database.name)\": conflicts \"resolver\": \(error)")
        }
    }

    public func conflictMonitor(database name: String) -> ConflictMonitor? { conflictMonitors[name] }
}
