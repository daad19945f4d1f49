import DocumentModel
import Foundation

/// One page (tab) of a `HeadlessChromium`, attached through its DevTools session.
public struct DevToolsPage: Sendable {
    public let connection: DevToolsConnection
    public let sessionID: String

    /// Loads `url` (returns once the navigation is committed; scripts may still run).
    public func navigate(_ url: String) async throws {
        let result = try await connection.send("Page.navigate", ["url": .string(url)], sessionID: sessionID)
        if let error = result["errorText"]?.stringValue { throw DevToolsConnection.Failure(description: "navigate \(url): \(error)") }
    }

    /// Evaluates `expression` in the page (`Runtime.evaluate`), waits for the promise
    /// it returns, and gives its value as JSON. A thrown error fails with its text and
    /// the page's console.
    public func evaluate(_ expression: String, timeout: Duration = .seconds(20)) async throws -> JSON {
        let result = try await connection.send(
            "Runtime.evaluate",
            ["expression": .string(expression), "awaitPromise": true, "returnByValue": true],
            sessionID: sessionID, timeout: timeout)
        if let exception = result["exceptionDetails"] {
            let console = connection.console.withLock { $0 }.joined(separator: "\n")
            throw DevToolsConnection.Failure(description: "\(exception["exception"]?["description"] ?? exception)\n\(console)")
        }
        return result["result"]?["value"] ?? .null
    }
}
