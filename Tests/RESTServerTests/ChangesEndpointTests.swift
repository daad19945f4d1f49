import DocumentModel
import Foundation
import Testing
import TestSupport

@Suite struct ChangesEndpointTests {
    @Test func normalFeedOptions() async throws {
        // Policy none: the conflict made on `b` must stay as written (no resolution
        // revision racing with the feed reads).
        try await withNode(conflicts: ConflictPolicy.none) { node in
            let rev = try #require(try await node.request("PUT", "/db/a", json: ["v": 1]).rev)
            _ = try await node.request("PUT", "/db/b", json: ["v": 1])
            _ = try await node.request("PUT", "/db/a", json: ["_rev": .string(rev), "v": 2])
            let cRev = try #require(try await node.request("PUT", "/db/c", json: ["v": 1]).rev)
            _ = try await node.request("DELETE", "/db/c?rev=\(cRev)")
            _ = try await node.request("PUT", "/db/b?new_edits=false", json: ["_rev": "1-ffff", "v": 9])

            let feed = try await node.request("GET", "/db/_changes")
            #expect(feed.status == 200)
            let results = try #require(feed.json["results"]?.arrayValue)
            #expect(results.map { $0["id"] } == ["a", "c", "b"])
            #expect(results.map { $0["seq"] } == [3, 5, 6])
            #expect(results[1]["deleted"] == true)
            #expect(feed.json["last_seq"] == 6)
            #expect(results[2]["changes"]?.arrayValue?.count == 1)

            let allDocs = try await node.request("GET", "/db/_changes?style=all_docs&since=5")
            #expect(allDocs.json["results"]?[0]?["changes"]?.arrayValue?.count == 2)
            let since = try await node.request("GET", "/db/_changes?since=3&limit=1&include_docs=true")
            #expect(since.json["results"]?.arrayValue?.count == 1)
            #expect(since.json["results"]?[0]?["doc"]?["_deleted"] == true)
            #expect(since.json["last_seq"] == 5)
            let active = try await node.request("GET", "/db/_changes?active_only=true")
            #expect(active.json["results"]?.arrayValue?.map { $0["id"] } == ["a", "b"])
            let filtered = try await node.request("GET", "/db/_changes?filter=_doc_ids&doc_ids=%5B%22b%22%5D")
            #expect(filtered.json["results"]?.arrayValue?.map { $0["id"] } == ["b"])
            let posted = try await node.request("POST", "/db/_changes", json: ["filter": "_doc_ids", "doc_ids": ["a", "c"], "since": 0])
            #expect(posted.json["results"]?.arrayValue?.map { $0["id"] } == ["a", "c"])
            let compound = try await node.request("GET", "/db/_changes?since=%220:5%22")
            #expect(compound.json["results"]?.arrayValue?.map { $0["id"] } == ["b"])
            let descending = try await node.request("GET", "/db/_changes?descending=true&limit=1")
            #expect(descending.json["results"]?.arrayValue?.map { $0["id"] } == ["b"])

            try await node.request("GET", "/db/_changes?feed=sideways").expectError(400, "bad_request")
            try await node.request("GET", "/db/_changes?filter=mine").expectError(400, "bad_request")
            try await node.request("GET", "/db/_changes?since=abc").expectError(400, "bad_request")
            try await node.request("POST", "/db/_changes", raw: Array("{".utf8), headers: ["Content-Type": "application/json"])
                .expectError(400, "bad_request")
        }
    }

    @Test func longpollWaitsForTheNextChange() async throws {
        try await withNode { node in
            _ = try await node.request("PUT", "/db/a", json: ["v": 1])
            // Changes already there: answers at once.
            let immediate = try await node.request("GET", "/db/_changes?feed=longpoll&since=0")
            #expect(immediate.json["results"]?.arrayValue?.count == 1)
            // Nothing new: waits until a write arrives.
            async let waiting = node.request("GET", "/db/_changes?feed=longpoll&since=1&timeout=20000")
            try await Task.sleep(for: .milliseconds(200))
            _ = try await node.request("PUT", "/db/b", json: ["v": 1])
            let woken = try await waiting
            #expect(woken.json["results"]?.arrayValue?.map { $0["id"] } == ["b"])
            #expect(woken.json["last_seq"] == 2)
            // Times out with no results.
            let timedOut = try await node.request("GET", "/db/_changes?feed=longpoll&since=2&timeout=100")
            #expect(timedOut.json["results"] == [])
            #expect(timedOut.json["last_seq"] == 2)
            let now = try await node.request("GET", "/db/_changes?feed=longpoll&since=now&timeout=100")
            #expect(now.json["results"] == [])
        }
    }

    @Test func continuousFeedStreamsLines() async throws {
        try await withNode { node in
            _ = try await node.request("PUT", "/db/a", json: ["v": 1])
            async let stream = node.request("GET", "/db/_changes?feed=continuous&since=0&limit=3&heartbeat=50")
            try await Task.sleep(for: .milliseconds(300))
            _ = try await node.request("PUT", "/db/b", json: ["v": 1])
            _ = try await node.request("PUT", "/db/c", json: ["v": 1])
            let text = try await stream.text
            let lines = text.split(separator: "\n").map { (try? JSON.parse(String($0))) ?? .null }
            #expect(lines.compactMap { $0["id"]?.stringValue } == ["a", "b", "c"])
            #expect(lines.last?["last_seq"] == 3)
            // While nothing changes, heartbeats (empty lines) keep the connection alive.
            async let idle = node.request("GET", "/db/_changes?feed=continuous&since=now&limit=1&heartbeat=50")
            // Forty heartbeat periods before the write (one second was once not enough for
            // the first heartbeat in a loaded full run).
            try await Task.sleep(for: .seconds(2))
            _ = try await node.request("PUT", "/db/d", json: ["v": 1])
            let idleText = try await idle.text
            #expect(idleText.hasPrefix("\n"), "\(idleText)")
            #expect(idleText.contains("\"id\":\"d\""))
            let timed = try await node.request("GET", "/db/_changes?feed=continuous&since=4&timeout=100")
            #expect(timed.text.trimmingCharacters(in: .whitespacesAndNewlines) == "{\"last_seq\":4}")
        }
    }

    /// `feed=eventsource`: Server-Sent Events (CouchDB's shape), heartbeat events,
    /// and `Last-Event-ID` resuming after the last event a browser saw.
    @Test func eventSourceFeedStreamsServerSentEvents() async throws {
        try await withNode { node in
            _ = try await node.request("PUT", "/db/a", json: ["v": 1])
            async let stream = node.request("GET", "/db/_changes?feed=eventsource&since=0&limit=3&heartbeat=50")
            try await Task.sleep(for: .milliseconds(300))
            _ = try await node.request("PUT", "/db/b", json: ["v": 1])
            _ = try await node.request("PUT", "/db/c", json: ["v": 1])
            let result = try await stream
            #expect(result.headers["content-type"] == "text/event-stream")
            let events = result.text.components(separatedBy: "\n\n").filter { !$0.isEmpty }
            let changes = events.filter { !$0.hasPrefix("event: heartbeat") }
            #expect(changes.count == 3, "\(result.text)")
            // An idle stream carries heartbeat events (read from a stream with nothing to
            // send, so that no scheduling delay can skip them).
            let port = node.ports.publicPort
            let heartbeat: String = try await offThePool {
                let socket = try RawSocket(port: port, timeout: 10)
                try socket.write(Array("GET /db/_changes?feed=eventsource&since=now&heartbeat=50 HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
                _ = try socket.readHead()
                var text = ""
                while !text.contains("event: heartbeat"), let chunk = try socket.readChunk() {
                    text += String(decoding: chunk, as: UTF8.self)
                }
                return text
            }
            #expect(heartbeat.contains("event: heartbeat"), "\(heartbeat)")
            for (index, (event, id)) in zip(changes, ["a", "b", "c"]).enumerated() {
                let lines = event.split(separator: "\n")
                #expect(lines.first == "id: \(index + 1)")
                let data = try JSON.parse(String(lines.last!.dropFirst("data: ".count)))
                #expect(data["id"] == .string(id))
                #expect(data["seq"] == .int(Int64(index + 1)))
            }
            // A reconnecting EventSource sends the last id it saw.
            let resumed = try await node.request(
                "GET", "/db/_changes?feed=eventsource&limit=1", headers: ["Last-Event-ID": "2"])
            #expect(resumed.text.hasPrefix("id: 3\ndata: "), "\(resumed.text)")
            #expect(resumed.text.contains("\"id\":\"c\""))
        }
    }
}
