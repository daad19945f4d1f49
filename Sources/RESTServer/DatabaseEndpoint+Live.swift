import DocumentModel
import DocumentStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Query
import ServiceLifecycle

/// Live queries over HTTP: a query's result, then each new result after commits change it
/// (`LiveQuery`), as `feed=longpoll`, `continuous` (one JSON result per line) or
/// `eventsource` (Server-Sent Events). Every result carries `update_seq`.
extension DatabaseEndpoint {
    enum LiveFeed: String { case longpoll, continuous, eventsource }

    /// The live feed asked for (`feed=…` in the query string or the body), nil for a
    /// plain answer; 400 for an unknown one.
    func liveFeed(body: [String: JSON]? = nil) throws(HTTPFailure) -> LiveFeed? {
        guard let name = query["feed"] ?? body?["feed"]?.stringValue, name != "normal" else { return nil }
        guard let feed = LiveFeed(rawValue: name) else { throw .badRequest("Unknown feed type: \(name)") }
        return feed
    }

    /// Streams `run`'s results as `feed`. `heartbeat` (ms, default 30 s for event
    /// streams) keeps idle connections open; `timeout` (ms, default 5 min) ends a
    /// longpoll with the unchanged result. The query runs once before the answer
    /// starts, so a query that fails gets its error status (as without `feed`), not a
    /// `200` whose stream breaks off.
    func liveResponse(_ feed: LiveFeed, run: @escaping @Sendable () async throws -> JSON) async throws -> Response {
        let asked: Duration? = try query.int("heartbeat").map { .milliseconds(max($0, 25)) }
        let heartbeat = asked ?? (feed == .eventsource ? .seconds(30) : nil)
        let timeout: Duration = try query.int("timeout").map { .milliseconds(max($0, 0)) } ?? .seconds(300)
        let store = self.store
        let startSequence = store.committedSequence
        let initial = (result: try await run(), sequence: startSequence)
        @Sendable func stamped(_ result: JSON, _ sequence: UInt64) -> JSON {
            guard case .object(var object) = result else { return result }
            object["update_seq"] = .int(Int64(sequence))
            return .object(object)
        }
        let body = ResponseBody { writer in
            // The feed ends when the node shuts down (its graceful shutdown waits for every
            // response to end): a longpoll then answers with the unchanged result.
            let events = Self.untilGracefulShutdown(
                LiveQuery.events(
                    store: store, heartbeat: feed == .longpoll ? (heartbeat ?? timeout) : heartbeat, initial: initial, run: run))
            let deadline = ContinuousClock.now + timeout
            var first: JSON?
            for try await event in events {
                switch (feed, event) {
                case (.longpoll, .result(let result, let sequence)):
                    if first == nil {
                        first = stamped(result, sequence)   // the state the client waits to see change
                        continue
                    }
                    try await writer.write(ByteBuffer(string: stamped(result, sequence).canonicalString + "\n"))
                    try await writer.finish(nil)
                    return
                case (.longpoll, .heartbeat):
                    if ContinuousClock.now >= deadline {
                        try await writer.write(ByteBuffer(string: (first ?? .null).canonicalString + "\n"))
                        try await writer.finish(nil)
                        return
                    }
                    if heartbeat != nil { try await writer.write(ByteBuffer(string: "\n")) }
                case (.continuous, .result(let result, let sequence)):
                    try await writer.write(ByteBuffer(string: stamped(result, sequence).canonicalString + "\n"))
                case (.continuous, .heartbeat):
                    try await writer.write(ByteBuffer(string: "\n"))
                case (.eventsource, .result(let result, let sequence)):
                    try await writer.write(ByteBuffer(string: ServerSentEvents.event(
                        id: String(sequence), data: stamped(result, sequence).canonicalString)))
                case (.eventsource, .heartbeat):
                    try await writer.write(ByteBuffer(string: ServerSentEvents.heartbeat))
                }
            }
            if feed == .longpoll, let first {
                try await writer.write(ByteBuffer(string: first.canonicalString + "\n"))
            }
            try await writer.finish(nil)
        }
        let contentType = feed == .eventsource ? ServerSentEvents.contentType : "application/json"
        return Response(status: .ok, headers: [.contentType: contentType, .cacheControl: "no-cache"], body: body)
    }

    /// `upstream`'s elements until it ends or the server begins its graceful shutdown;
    /// then the stream finishes (and `upstream`, no longer read, is cancelled). Call it in
    /// the response's task: the shutdown it watches is that task's server's.
    static func untilGracefulShutdown<Element: Sendable>(
        _ upstream: AsyncThrowingStream<Element, any Error>
    ) -> AsyncThrowingStream<Element, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Element, any Error>.makeStream()
        let pump = Task {
            do {
                try await withGracefulShutdownHandler {
                    for try await element in upstream { continuation.yield(element) }
                } onGracefulShutdown: {
                    continuation.finish()
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in pump.cancel() }
        return stream
    }
}
