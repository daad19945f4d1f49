/// Server-Sent Events framing (`text/event-stream`, the WHATWG HTML standard) for the
/// live feeds a browser follows with `EventSource`: `_changes?feed=eventsource` and
/// live queries.
enum ServerSentEvents {
    static let contentType = "text/event-stream"

    /// One event: optional `event:` name and `id:` (a client that reconnects sends the
    /// last one back as `Last-Event-ID`), then the data, one `data:` line per line.
    static func event(id: String? = nil, name: String? = nil, data: String) -> String {
        var text = ""
        if let name { text += "event: \(name)\n" }
        if let id { text += "id: \(id)\n" }
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) {
            text += "data: \(line)\n"
        }
        return text + "\n"
    }

    /// The keep-alive CouchDB sends on an idle event stream.
    static let heartbeat = "event: heartbeat\ndata:\n\n"
}
