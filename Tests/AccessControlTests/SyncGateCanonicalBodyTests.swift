import AccessControl
import DocumentModel
import DocumentStore
import Testing
import TestSupport

/// A revision whose body is held as canonical bytes (as replication receives it) is
/// routed exactly like the same body parsed: by the default routing, which reads only
/// `channels` from the bytes, and by a sync function, which sees the whole body.
@Suite struct SyncGateCanonicalBodyTests {
    static let texts = [
        #"{"channels":["x","y"],"n":1}"#,
        #"{"channels":"solo","n":5}"#,
        #"{"n":2}"#,
        #"{"channels":["x",7,"bad name!"],"n":3}"#,
    ]

    func routes(_ gate: SyncGate, canonical: Bool) async throws -> [Set<String>?] {
        let test = try await TestStore.make()
        defer { test.destroy() }
        let store = test.store
        store.setGate(gate)
        let updates = try Self.texts.enumerated().map { index, text in
            let history = [RevID("1-a\(index)")!]
            if canonical {
                return DocumentUpdate(docID: "d\(index)", object: try #require(ObjectBody(canonical: Array(text.utf8))),
                                      mode: .replicate(history: history))
            }
            return DocumentUpdate(docID: "d\(index)", body: try #require(try JSON.parse(text).objectValue),
                                  mode: .replicate(history: history))
        }
        for result in try await store.save(batch: updates) { _ = try result.get() }
        var channels: [Set<String>?] = []
        for index in Self.texts.indices { channels.append(try await store.documentChannels(docID: "d\(index)")) }
        return channels
    }

    @Test func defaultRoutingReadsChannelsFromTheBytes() async throws {
        let fromBytes = try await routes(SyncGate(function: nil), canonical: true)
        #expect(fromBytes == (try await routes(SyncGate(function: nil), canonical: false)))
        #expect(fromBytes[0] == ["x", "y"])
        #expect(fromBytes[1] == ["solo"])
    }

    @Test func syncFunctionSeesTheWholeBody() async throws {
        let function = try SyncFunction(source: "function(doc) { channel(doc.n > 2 ? 'big' : 'small'); channel(doc._id); }")
        let fromBytes = try await routes(SyncGate(function: function), canonical: true)
        #expect(fromBytes == (try await routes(SyncGate(function: function), canonical: false)))
        #expect(fromBytes[0] == ["small", "d0"])
        #expect(fromBytes[1] == ["big", "d1"])
    }
}
