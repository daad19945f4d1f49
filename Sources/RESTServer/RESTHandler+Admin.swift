import AdminUI
import DocumentModel
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle

/// The admin web UI on the admin listener only: its files at `/_admin/…` (every path
/// that is not a file gets the page, whose router opens the right view, e.g.
/// `/_admin/db/todo/sync`), and `/_admin/events`, the Server-Sent Events stream the
/// page follows: a `hello` (node ID and start time, so the page sees a restart), a
/// `history` (the metric samples of the last minutes, `MetricsHistory`), then every
/// `interval` ms (default 1000) a `status` (mesh, databases, resolver, replications,
/// resync) and a `metrics` event (the `/_metrics` text); between those, a `resync` event
/// (database → `GET /{db}/_resync`'s answer) as soon as a resync's progress changes.
extension RESTHandler {
    /// How often the event stream looks for resync progress between status events.
    static let resyncCheckInterval = Duration.milliseconds(250)

    func adminUI(_ request: RESTRequest) async throws -> Response {
        guard isAdmin else { throw HTTPFailure.notFound("The admin UI is on the admin port") }
        try allow(request, "GET,HEAD", request.isRead)
        let path = Array(request.segments.dropFirst())
        if path == ["events"] { return try adminEvents(request) }
        guard let asset = AdminAssets.asset(path: path) else { throw HTTPFailure.notFound("no such admin UI file") }
        return Response(
            status: .ok, headers: [.contentType: asset.contentType, .cacheControl: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: asset.bytes)))
    }

    private func adminEvents(_ request: RESTRequest) throws -> Response {
        let interval = try request.query.int("interval") ?? 1000
        guard (100...60_000).contains(interval) else { throw HTTPFailure.badRequest("interval must be 100…60000 ms") }
        let handler = self
        let hello: JSON = [
            "node_id": configuration.nodeID.map { .string($0) } ?? .null,
            "start_time": .string(String(configuration.startTime)),
            "version": .string(configuration.version),
        ]
        let body = ResponseBody { writer in
            // `retry:` makes the browser reconnect after one second when the node goes away.
            try await writer.write(ByteBuffer(string: "retry: 1000\n\n" + ServerSentEvents.event(name: "hello", data: hello.canonicalString)
                + ServerSentEvents.event(name: "history", data: handler.metricsHistory.json.canonicalString)))
            // The stream ends when the node shuts down (its graceful shutdown waits for
            // every response to end) or the page goes away (a write fails).
            var resyncs = handler.resyncSnapshot()
            var nextStatus = ContinuousClock.now
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                if ContinuousClock.now >= nextStatus {
                    let metrics = handler.mesh?.metricsText() ?? ""
                    handler.metricsHistory.record(metrics)
                    let text = ServerSentEvents.event(name: "status", data: await handler.adminSnapshot().canonicalString)
                        + ServerSentEvents.event(name: "metrics", data: metrics)
                    try await writer.write(ByteBuffer(string: text))
                    resyncs = handler.resyncSnapshot()
                    nextStatus = ContinuousClock.now + .milliseconds(interval)
                } else {
                    let current = handler.resyncSnapshot()
                    if current != resyncs {
                        resyncs = current
                        try await writer.write(ByteBuffer(string: ServerSentEvents.event(name: "resync", data: current.canonicalString)))
                    }
                }
                let wait = min(nextStatus - ContinuousClock.now, Self.resyncCheckInterval)
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: max(wait, .milliseconds(1))) }
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: ServerSentEvents.contentType, .cacheControl: "no-cache"], body: body)
    }

    /// Database → its latest resync (`GET /{db}/_resync`), for the databases that ran one.
    func resyncSnapshot() -> JSON {
        var resyncs: [String: JSON] = [:]
        for name in registry.databaseNames {
            if let status = registry.security(database: name)?.resyncStatus { resyncs[name] = DatabaseEndpoint.resyncJSON(status) }
        }
        return .object(resyncs)
    }

    /// One `status` event: the mesh (as `GET /_mesh`), and per database its counts,
    /// conflict policies, what the resolver did and its replications.
    func adminSnapshot() async -> JSON {
        var databases: [JSON] = []
        for name in registry.databaseNames.sorted() {
            guard let store = registry.database(named: name) else { continue }
            let info = store.info()
            var database: [String: JSON] = [
                "name": .string(name), "doc_count": .int(Int64(info.docCount)),
                "update_seq": .int(Int64(info.updateSequence)),
                "users": .bool(registry.security(database: name) != nil),
            ]
            if let monitor = registry.conflictMonitor(database: name) {
                database["policies"] = DatabaseEndpoint.policiesJSON(monitor.policies)
                database["resolver"] = DatabaseEndpoint.resolverJSON(monitor)
            }
            if let replications {
                database["replications"] = .object(replications.replicationStatuses(database: name))
            }
            if let status = registry.security(database: name)?.resyncStatus {
                database["resync"] = DatabaseEndpoint.resyncJSON(status)
            }
            databases.append(.object(database))
        }
        return [
            "time": .string(ISO8601Time.string(Date())),
            "mesh": await mesh?.meshStatus() ?? .null,
            "databases": .array(databases),
        ]
    }
}
