import DocumentModel
import DocumentStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

extension DatabaseEndpoint {
    /// Logs under Sync Gateway's `Changes` key.
    static let changesLogger = Logger(label: "Changes")

    /// `GET/POST /{db}/_changes` with `feed=normal|longpoll|continuous|eventsource`.
    func changes() async throws -> Response {
        try allow(request, "GET,HEAD,POST", request.isRead || request.method == .post)
        var body: [String: JSON]?
        if request.method == .post {
            let buffer = try await request.collectBody(limit: configuration.maxRequestBytes)
            if buffer.readableBytes > 0 {
                guard let object = (try? JSON.parse(Array(buffer.readableBytesView)))?.objectValue else {
                    throw HTTPFailure.badRequest("Invalid JSON body for _changes")
                }
                body = object
            }
        }
        let options = try ChangesOptions(
            query: query, body: body, lastEventID: request.headers[HTTPField.Name("Last-Event-ID")!])
        let since = options.since ?? store.committedSequence
        Self.changesLogger.debug(
            "\(store.name): feed=\(options.feed.rawValue) since=\(since) limit=\(options.limit.map(String.init) ?? "none")")
        switch options.feed {
        case .normal:
            let (entries, last) = try await changeEntries(since: since, options: options, limit: options.limit)
            return RESTResponse.json(["results": .array(entries), "last_seq": .int(Int64(last))])
        case .longpoll:
            return longpoll(since: since, options: options)
        case .continuous:
            return continuous(since: since, options: options, events: false)
        case .eventsource:
            return continuous(since: since, options: options, events: true)
        }
    }

    /// Entries after `since` and the sequence to continue from. A user's feed (or a
    /// channel filter) is a channel feed: documents in the channels, and documents that
    /// left them (`"removed": [channels]`, as Sync Gateway reports it).
    private func changeEntries(
        since: UInt64, options: ChangesOptions, limit: Int?
    ) async throws(HTTPFailure) -> ([JSON], UInt64) {
        // Read before the query: every change up to here is in the query's snapshot.
        let committed = store.committedSequence
        let storeLimit = options.descending ? nil : limit
        var changes: [ChannelChange]
        do {
            if let channels = feedChannels(requested: options.channels) {
                changes = try await store.changes(
                    since: since, channels: channels, limit: storeLimit, activeOnly: options.activeOnly,
                    includeBodies: options.includeDocs)
                if let docIDs = options.docIDs { changes = changes.filter { docIDs.contains($0.listing.docID) } }
            } else {
                changes = try await store.changes(
                    since: since, limit: storeLimit, docIDs: options.docIDs, activeOnly: options.activeOnly,
                    includeBodies: options.includeDocs
                ).map(ChannelChange.init(listing:))
            }
        } catch {
            throw HTTPFailure(error)
        }
        var ordered = options.descending ? changes.reversed() : changes
        if options.descending, let limit { ordered = Array(ordered.prefix(limit)) }
        let renderer = DocumentRenderer()
        let entries = ordered.map { change -> JSON in
            let listing = change.listing
            var entry: [String: JSON] = ["seq": .int(Int64(change.sequence)), "id": .string(listing.docID)]
            if change.isRemoval {
                entry["removed"] = .array(change.removed.map { .string($0) })
                entry["changes"] = [["rev": .string((change.removalRev ?? listing.winner).description)]]
            } else {
                let revs = options.allLeaves ? listing.tree.leaves : [listing.winner]
                entry["changes"] = .array(revs.map { ["rev": .string($0.description)] })
                if listing.deleted { entry["deleted"] = true }
                if options.includeDocs { entry["doc"] = rendered(listing, renderer: renderer) }
            }
            return .object(entry)
        }
        // A feed cut short by its limit continues after its last entry; otherwise the
        // whole range up to the committed sequence was scanned (filtered or not).
        let limited = !options.descending && limit.map { changes.count >= $0 } ?? false
        let highest = changes.map(\.sequence).max() ?? 0
        let last = limited ? max(since, highest) : max(since, committed, highest)
        return (entries, last)
    }

    /// Answers at once when there are changes, else when the first one arrives (or
    /// the timeout passes), sending heartbeat newlines while it waits.
    private func longpoll(since: UInt64, options: ChangesOptions) -> Response {
        let endpoint = self
        let body = ResponseBody { writer in
            let deadline = ContinuousClock.now + options.timeout
            var (entries, last) = try await endpoint.changeEntries(since: since, options: options, limit: options.limit)
            while entries.isEmpty && ContinuousClock.now < deadline {
                let wait = min(options.heartbeat ?? options.timeout, deadline - ContinuousClock.now)
                if await endpoint.store.waitForChange(after: last, timeout: wait) {
                    (entries, last) = try await endpoint.changeEntries(since: since, options: options, limit: options.limit)
                } else if options.heartbeat != nil, ContinuousClock.now < deadline {
                    try await writer.write(ByteBuffer(string: "\n"))
                }
                if Task.isCancelled { break }
            }
            let json: JSON = ["results": .array(entries), "last_seq": .int(Int64(last))]
            try await writer.write(ByteBuffer(string: json.canonicalString + "\n"))
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/json"], body: body)
    }

    /// One JSON object per line as changes happen, newline heartbeats, and a final
    /// `{"last_seq": N}` when the limit or the timeout is reached. With `events`
    /// (`feed=eventsource`), the same entries as Server-Sent Events: `id:` is the
    /// entry's sequence, `data:` its JSON, and heartbeats are `heartbeat` events.
    private func continuous(since: UInt64, options: ChangesOptions, events: Bool) -> Response {
        let endpoint = self
        let body = ResponseBody { writer in
            var last = since
            var remaining = options.limit
            var idleSince = ContinuousClock.now
            // A graceful shutdown ends the feed (it would otherwise wait for the client).
            while remaining.map({ $0 > 0 }) ?? true, !Task.isCancelled, !Task.isShuttingDownGracefully {
                let (entries, next) = try await endpoint.changeEntries(since: last, options: options, limit: remaining)
                if !entries.isEmpty {
                    var text = ""
                    for entry in entries {
                        if events {
                            text += ServerSentEvents.event(id: entry["seq"]?.canonicalString, data: entry.canonicalString)
                        } else {
                            text += entry.canonicalString + "\n"
                        }
                    }
                    try await writer.write(ByteBuffer(string: text))
                    remaining = remaining.map { $0 - entries.count }
                    idleSince = ContinuousClock.now
                }
                last = next
                if remaining == 0 { break }
                let idleLeft = options.timeout - (ContinuousClock.now - idleSince)
                if idleLeft <= .zero && options.heartbeat == nil { break }
                let wait = options.heartbeat.map { min($0, max(idleLeft, .milliseconds(1))) } ?? idleLeft
                let seen = last
                let changed = await cancelWhenGracefulShutdown { await endpoint.store.waitForChange(after: seen, timeout: wait) }
                if Task.isShuttingDownGracefully { break }
                if !changed {
                    if options.heartbeat != nil {
                        try await writer.write(ByteBuffer(string: events ? ServerSentEvents.heartbeat : "\n"))
                    }
                    if options.heartbeat == nil && ContinuousClock.now - idleSince >= options.timeout { break }
                }
            }
            if !events { try await writer.write(ByteBuffer(string: "{\"last_seq\":\(last)}\n")) }
            try await writer.finish(nil)
        }
        if events {
            return Response(
                status: .ok, headers: [.contentType: ServerSentEvents.contentType, .cacheControl: "no-cache"], body: body)
        }
        return Response(status: .ok, headers: [.contentType: "application/json"], body: body)
    }
}
