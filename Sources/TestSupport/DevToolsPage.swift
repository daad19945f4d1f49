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
    @discardableResult
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

    /// Sets the page's viewport (CSS pixels, device scale 1), as a window of that size would.
    public func setViewport(width: Int, height: Int) async throws {
        try await connection.send(
            "Emulation.setDeviceMetricsOverride",
            ["width": .int(Int64(width)), "height": .int(Int64(height)), "deviceScaleFactor": 1, "mobile": false],
            sessionID: sessionID)
    }

    /// A PNG of what the viewport shows now.
    public func screenshot() async throws -> Data {
        let result = try await connection.send("Page.captureScreenshot", ["format": "png"], sessionID: sessionID)
        guard let text = result["data"]?.stringValue, let data = Data(base64Encoded: text) else {
            throw DevToolsConnection.Failure(description: "no screenshot in \(result)")
        }
        return data
    }

    /// Waits until `expression` evaluates to true in the page (false after `timeout`).
    public func waitFor(_ expression: String, timeout: Duration = .seconds(20)) async throws -> Bool {
        await eventually(timeout: timeout, every: .milliseconds(100)) {
            (try? await evaluate("Boolean(\(expression))", timeout: .seconds(5))) == true
        }
    }
}
