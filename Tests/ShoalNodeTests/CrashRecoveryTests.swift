import DocumentModel
import Foundation
import Synchronization
import Testing
import TestSupport

/// A node killed with SIGKILL in the middle of a stream of writes reopens with
/// every acknowledged write present.
@Suite(.serialized) struct CrashRecoveryTests {
    /// What the writers got a 2xx for: every revision of every document.
    final class Ledger: Sendable {
        let acknowledged = Mutex<[(id: String, rev: String)]>([])
        /// Set when the node has been killed: writers stop.
        let stopped = Mutex(false)
        var isStopped: Bool { stopped.withLock { $0 } }
        func record(_ id: String, _ rev: String) { acknowledged.withLock { $0.append((id, rev)) } }
        var all: [(id: String, rev: String)] { acknowledged.withLock { $0 } }
    }

    /// `encrypted`: durability normal, through the encrypting VFS (WAL recovery of sealed frames).
    @Test(arguments: ["full", "normal", "encrypted"])
    func killedNodeKeepsEveryAcknowledgedWrite(durability: String) async throws {
        let directory = TemporaryDirectory(prefix: "shoal-crash")
        defer { directory.remove() }
        let keys = TemporaryDirectory(prefix: "shoal-crash-key")
        defer { keys.remove() }
        var arguments = ["--durability", durability]
        if durability == "encrypted" {
            try Data(String(repeating: "5a", count: 32).utf8).write(to: URL(fileURLWithPath: keys.path + "/key"))
            arguments = ["--durability", "normal", "--encryption-key-file", keys.path + "/key"]
        }
        let ledger = Ledger()
        var generator = SystemRandomNumberGenerator()
        for cycle in 0..<3 {
            let node = try await ShoalProcess.start(dataDirectory: directory.path, arguments: arguments)
            // Everything acknowledged in earlier lives is still there after a restart.
            try await verify(ledger, on: node)
            ledger.stopped.withLock { $0 = false }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask { await Self.write(writer: "c\(cycle)w\(writer)", node: node, ledger: ledger) }
                }
                group.addTask { await Self.bulkWrite(prefix: "c\(cycle)b", node: node, ledger: ledger) }
                try await Task.sleep(for: .milliseconds(Int.random(in: 300...800, using: &generator)))
                node.signal(SIGKILL)
                ledger.stopped.withLock { $0 = true }
                try await group.waitForAll()
            }
            #expect(await node.waitForExit() == SIGKILL)
        }
        #expect(ledger.all.count > 50, "the writers made too little progress to test anything")
        let node = try await ShoalProcess.start(dataDirectory: directory.path, arguments: arguments)
        try await verify(ledger, on: node)
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    /// One writer: creates documents and updates each a few times, sequentially.
    static func write(writer: String, node: ShoalProcess, ledger: Ledger) async {
        var index = 0
        while !ledger.isStopped {
            let id = "\(writer)-\(index)"
            var rev: String?
            for version in 0..<3 {
                var body: [String: JSON] = ["writer": .string(writer), "version": .int(Int64(version))]
                if let rev { body["_rev"] = .string(rev) }
                guard let response = try? await node.request("PUT", "/db/\(id)", body: JSON.object(body).canonicalBytes()),
                      response.status == 201, let newRev = response.json["rev"]?.stringValue
                else { return }
                ledger.record(id, newRev)
                rev = newRev
            }
            index += 1
        }
    }

    /// A `_bulk_docs` writer: 50 new documents per request.
    static func bulkWrite(prefix: String, node: ShoalProcess, ledger: Ledger) async {
        var batch = 0
        while !ledger.isStopped {
            let docs: [JSON] = (0..<50).map { ["_id": .string("\(prefix)-\(batch)-\($0)"), "n": .int(Int64($0))] }
            guard let response = try? await node.request("POST", "/db/_bulk_docs", body: JSON.object(["docs": .array(docs)]).canonicalBytes()),
                  response.status == 201, let results = response.json.arrayValue
            else { return }
            for result in results {
                if let id = result["id"]?.stringValue, let rev = result["rev"]?.stringValue { ledger.record(id, rev) }
            }
            batch += 1
        }
    }

    /// Checks every acknowledged revision with `_bulk_get`, 500 at a time.
    func verify(_ ledger: Ledger, on node: ShoalProcess) async throws {
        var missing: [String] = []
        let all = ledger.all
        for start in stride(from: 0, to: all.count, by: 500) {
            let chunk = all[start..<min(start + 500, all.count)]
            let request: JSON = ["docs": .array(chunk.map { ["id": .string($0.id), "rev": .string($0.rev)] })]
            let response = try await node.request("POST", "/db/_bulk_get", body: request.canonicalBytes())
            let results = response.json["results"]?.arrayValue ?? []
            #expect(results.count == chunk.count)
            for (asked, result) in zip(chunk, results) where result["docs"]?[0]?["ok"]?["_rev"]?.stringValue != asked.rev {
                missing.append("\(asked.id)@\(asked.rev)")
            }
        }
        #expect(missing.isEmpty, "acknowledged writes lost: \(missing.prefix(10))")
    }
}

@Suite struct ProcessLifecycleTests {
    @Test func sigtermStopsCleanlyAndKeepsData() async throws {
        let directory = TemporaryDirectory(prefix: "shoal-term")
        defer { directory.remove() }
        var node = try await ShoalProcess.start(dataDirectory: directory.path)
        let put = try await node.request("PUT", "/db/kept", body: Array("{\"a\":1}".utf8))
        #expect(put.status == 201)
        node.signal(SIGINT)
        #expect(await node.waitForExit() == 0)
        node = try await ShoalProcess.start(dataDirectory: directory.path)
        #expect(try await node.request("GET", "/db/kept").json["a"] == 1)
        node.signal(SIGTERM)
        #expect(await node.waitForExit() == 0)
    }

    @Test func busyPortFailsWithAClearError() async throws {
        let first = try await TestNode.start()
        defer { Task { await first.stop() } }
        let directory = TemporaryDirectory(prefix: "shoal-busy")
        defer { directory.remove() }
        let (status, text) = try await ShoalProcess.run(
            ["serve", "--data", directory.path, "--interface", "127.0.0.1", "--port", String(first.ports.publicPort), "--admin-port", "0"])
        #expect(status != 0)
        #expect(text.contains("cannot listen on"), "\(text)")
    }
}
