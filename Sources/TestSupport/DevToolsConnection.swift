import DocumentModel
import Foundation
import Logging
import NIOCore
import Synchronization
import WSClient

/// A client of the Chrome DevTools protocol over its WebSocket: commands are JSON
/// `{"id", "method", "params", "sessionId"?}` text messages, each answered by a message
/// with the same `id` (`result` or `error`); messages without an `id` are events.
public final class DevToolsConnection: Sendable {
    /// A command answered with an `error`, or not answered in time.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private struct State {
        var nextID = 1
        var pending: [Int: CheckedContinuation<JSON, any Error>] = [:]
        var closed = false
    }

    private let outbound: WebSocketOutboundWriter
    private let state = Mutex(State())
    /// Console messages and uncaught exceptions of the page (`Runtime` events), for
    /// failure messages.
    public let console = Mutex<[String]>([])

    init(outbound: WebSocketOutboundWriter) {
        self.outbound = outbound
    }

    /// Connects to `url` (a `ws://…/devtools/browser/…` endpoint) and runs `body`
    /// with the connection; the WebSocket closes when `body` returns.
    static func connect<T: Sendable>(url: String, _ body: @escaping @Sendable (DevToolsConnection) async throws -> T) async throws -> T {
        let result = Mutex<Result<T, any Error>?>(nil)
        try await WebSocketClient.connect(
            url: url, configuration: .init(maxFrameSize: 1 << 24), logger: Logger(label: "DevTools")
        ) { inbound, outbound, _ in
            let connection = DevToolsConnection(outbound: outbound)
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    defer { connection.fail(all: "the DevTools connection closed") }
                    do {
                        for try await message in inbound.messages(maxSize: 1 << 24) {
                            if case .text(let text) = message { connection.received(text) }
                        }
                    } catch {
                        // The connection failed: every waiting command fails (defer).
                    }
                }
                do {
                    let value = try await body(connection)
                    result.withLock { $0 = .success(value) }
                } catch {
                    result.withLock { $0 = .failure(error) }
                }
                group.cancelAll()
            }
        }
        guard let outcome = result.withLock({ $0 }) else { throw Failure(description: "the DevTools connection failed") }
        return try outcome.get()
    }

    /// Sends a command (to a page's `sessionID`, or to the browser) and returns its
    /// `result`.
    @discardableResult
    public func send(_ method: String, _ params: JSON = [:], sessionID: String? = nil, timeout: Duration = .seconds(20)) async throws -> JSON {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        var fields: [String: JSON] = ["id": .int(Int64(id)), "method": .string(method), "params": params]
        if let sessionID { fields["sessionId"] = .string(sessionID) }
        let command = JSON.object(fields)
        let timer = Task {
            try await Task.sleep(for: timeout)
            self.fail(id: id, "\(method): no answer within \(timeout)")
        }
        defer { timer.cancel() }
        let reply = try await withCheckedThrowingContinuation { continuation in
            let closed = state.withLock { state in
                if !state.closed { state.pending[id] = continuation }
                return state.closed
            }
            if closed { continuation.resume(throwing: Failure(description: "\(method): the DevTools connection closed")) }
            Task {
                do {
                    try await outbound.write(.text(command.canonicalString))
                } catch {
                    self.fail(id: id, "\(method): \(error)")
                }
            }
        }
        if let error = reply["error"] { throw Failure(description: "\(method): \(error)") }
        return reply["result"] ?? [:]
    }

    private func received(_ text: String) {
        guard let message = try? JSON.parse(text) else { return }
        if let id = message["id"]?.intValue {
            let continuation = state.withLock { $0.pending.removeValue(forKey: Int(id)) }
            continuation?.resume(returning: message)
            return
        }
        switch message["method"]?.stringValue {
        case "Runtime.consoleAPICalled":
            let args = message["params"]?["args"]?.arrayValue?.map { $0["value"].map { "\($0)" } ?? "\($0)" } ?? []
            console.withLock { $0.append("console: " + args.joined(separator: " ")) }
        case "Runtime.exceptionThrown":
            console.withLock { $0.append("exception: \(message["params"]?["exceptionDetails"] ?? .null)") }
        default:
            break
        }
    }

    private func fail(id: Int, _ reason: String) {
        let continuation = state.withLock { $0.pending.removeValue(forKey: id) }
        continuation?.resume(throwing: Failure(description: reason))
    }

    private func fail(all reason: String) {
        let pending = state.withLock { state in
            state.closed = true
            defer { state.pending.removeAll() }
            return state.pending
        }
        for continuation in pending.values { continuation.resume(throwing: Failure(description: reason)) }
    }
}
