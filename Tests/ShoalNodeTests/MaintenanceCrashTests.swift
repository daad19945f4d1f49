import DocumentModel
import DocumentStore
import Foundation
import Testing
import TestSupport

/// SIGKILL of a `shoal serve` process at random moments of compaction, purge and resync
/// (rekey has its own in `EncryptionNodeTests`): every restart opens a database that
/// passes `PRAGMA integrity_check`, still holds every document's latest revision, and
/// where a purge either happened whole for a document or not at all.
@Suite(.serialized) struct MaintenanceCrashTests {
    static let count = 4_000

    /// A database of `count` documents, each edited once (so compaction has bodies to
    /// drop), written directly through the store.
    static func prepare(_ directory: TemporaryDirectory) async throws {
        let store = try DocumentStore(configuration: StoreConfiguration(
            name: "db", location: .directory(directory.path), durability: .normal))
        defer { store.close() }
        let ids = (0..<count).map { "d\($0)" }
        let first = try await store.save(batch: ids.map {
            DocumentUpdate(docID: $0, body: ["v": 1, "pad": .string(String(repeating: "a", count: 300))], mode: .edit(parent: nil))
        })
        _ = try await store.save(batch: zip(ids, first).map { id, result in
            DocumentUpdate(
                docID: id, body: ["v": 2, "pad": .string(String(repeating: "b", count: 300))],
                mode: .edit(parent: try result.get().revID))
        })
    }

    @Test(arguments: ["_compact", "_purge", "_resync"])
    func aKilledMaintenanceLeavesASoundDatabase(operation: String) async throws {
        let directory = TemporaryDirectory(prefix: "shoal-maint")
        defer { directory.remove() }
        try await Self.prepare(directory)
        var generator = SystemRandomNumberGenerator()
        var purgeable = (0..<Self.count).map { "d\($0)" }.shuffled(using: &generator)
        var killedDuring = 0
        for round in 0..<4 {
            let node = try await ShoalProcess.start(dataDirectory: directory.path, arguments: ["--durability", "normal"])
            var body: [UInt8] = Array("{}".utf8)
            if operation == "_purge" {
                let chunk = purgeable.prefix(300)
                purgeable.removeFirst(chunk.count)
                body = JSON.object(Dictionary(uniqueKeysWithValues: chunk.map { ($0, JSON.array(["*"])) })).canonicalBytes()
            }
            let request = Task { try await node.request("POST", "/db/\(operation)", body: body, admin: true) }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...(round == 0 ? 5 : 120), using: &generator)))
            node.signal(SIGKILL)
            #expect(await node.waitForExit() == SIGKILL)
            if (try? await request.value)?.status != 200 { killedDuring += 1 }

            let store = try DocumentStore(configuration: StoreConfiguration(
                name: "db", location: .directory(directory.path), durability: .normal))
            #expect(try await store.integrityCheck() == ["ok"], "\(operation), round \(round)")
            // Every document is either whole (its latest revision's body) or purged whole.
            let ids = (0..<Self.count).map { "d\($0)" }
            var present = 0
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = Array(ids[start..<min(start + 500, ids.count)])
                for (id, listing) in zip(chunk, try await store.documents(chunk, includeBodies: true)) {
                    guard let listing else {
                        #expect(operation == "_purge", "\(id) is gone after a killed \(operation)")
                        continue
                    }
                    present += 1
                    #expect(listing.winner.generation == 2, "\(id)")
                    #expect(listing.body?["v"] == 2, "\(id)")
                }
            }
            #expect(store.info().docCount == present)
            if operation != "_purge" { #expect(present == Self.count) }
            await store.close()
        }
        print("\(operation): killed during the operation in \(killedDuring) of 4 rounds")
        #expect(killedDuring > 0, "no kill landed during \(operation)")
    }
}
