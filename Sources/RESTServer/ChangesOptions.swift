import DocumentModel
import Foundation

/// The options of one `_changes` request, from the query string and (for POST) the
/// JSON body.
struct ChangesOptions: Sendable {
    enum Feed: String, Sendable { case normal, longpoll, continuous, eventsource }

    var feed: Feed = .normal
    /// Start after this sequence; nil means "now" (only new changes).
    var since: UInt64? = 0
    var limit: Int?
    var includeDocs = false
    var allLeaves = false
    var activeOnly = false
    var descending = false
    var docIDs: Set<String>?
    /// `filter=sync_gateway/bychannel&channels=a,b`: only these channels.
    var channels: Set<String>?
    /// Send a newline this often while waiting (continuous and longpoll).
    var heartbeat: Duration?
    /// Give up waiting for changes after this long.
    var timeout: Duration = .seconds(300)

    /// `lastEventID`: the `Last-Event-ID` header of an EventSource that reconnects; it
    /// wins over `since` (the client saw everything up to it).
    init(query: QueryParameters, body: [String: JSON]?, lastEventID: String? = nil) throws(HTTPFailure) {
        // A POST body may carry any option; body values win over the query string.
        var merged = query
        if let body {
            var values: [String: String] = [:]
            for (key, value) in body {
                if let string = value.stringValue { values[key] = string }
                else if case .array = value { values[key] = value.canonicalString }
                else { values[key] = value.canonicalString }
            }
            merged = QueryParameters(values).merging(over: query)
        }
        if let feedName = merged["feed"] {
            guard let feed = Feed(rawValue: feedName) else {
                throw .badRequest("Unknown feed type: \(feedName)")
            }
            self.feed = feed
        }
        if let sinceValue = merged["since"] {
            since = try Self.parseSequence(sinceValue)
        }
        limit = try merged.int("limit")
        includeDocs = try merged.bool("include_docs")
        allLeaves = merged["style"] == "all_docs"
        activeOnly = try merged.bool("active_only")
        descending = try merged.bool("descending")
        if merged["filter"] == "sync_gateway/bychannel" {
            guard let list = merged["channels"], !list.isEmpty else {
                throw .badRequest("filter=sync_gateway/bychannel requires channels")
            }
            channels = Set(Self.channelList(list))
        } else if let filter = merged["filter"] {
            guard filter == "_doc_ids" else { throw .badRequest("Unknown filter: \(filter)") }
            guard let ids = try merged.stringList("doc_ids") else {
                throw .badRequest("filter=_doc_ids requires doc_ids")
            }
            docIDs = Set(ids)
        } else if let ids = try merged.stringList("doc_ids") {
            docIDs = Set(ids)
        }
        if merged["heartbeat"] == "true" {
            heartbeat = .seconds(60)
        } else if let heartbeat = try merged.int("heartbeat") {
            self.heartbeat = .milliseconds(max(heartbeat, 25))
        }
        if let timeout = try merged.int("timeout") {
            self.timeout = .milliseconds(timeout)
        }
        if feed == .eventsource {
            // An event stream stays open (proxies and browsers need traffic to keep it):
            // a heartbeat event every 30 s unless asked otherwise.
            if heartbeat == nil { heartbeat = .seconds(30) }
            if let lastEventID, !lastEventID.isEmpty { since = try Self.parseSequence(lastEventID) }
        }
    }

    /// `a,b` or a JSON array `["a","b"]`.
    static func channelList(_ text: String) -> [String] {
        if text.hasPrefix("["), let array = (try? JSON.parse(text))?.arrayValue {
            return array.compactMap(\.stringValue)
        }
        return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `N`, `"N"`, or Sync Gateway's compound forms `"A:N"` (the last number counts),
    /// or `now`.
    static func parseSequence(_ text: String) throws(HTTPFailure) -> UInt64? {
        let trimmed = text.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        if trimmed == "now" { return nil }
        if trimmed.isEmpty { return 0 }
        guard let last = trimmed.split(separator: ":").last, let value = UInt64(last) else {
            throw .badRequest("Invalid since sequence: \(text)")
        }
        return value
    }
}

extension QueryParameters {
    /// These parameters, with `other`'s filling the keys these lack.
    func merging(over other: QueryParameters) -> QueryParameters {
        var result = other
        result.overlay(self)
        return result
    }
}
