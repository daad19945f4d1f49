import BLIP
import Foundation
import Logging
import Synchronization
import Testing
import TestSupport

/// A server that writes its first BLIP frame in the same TCP segment as the `101`
/// (a Shoal acceptor sending its first mesh report at once does) loses nothing: the
/// client decodes that frame and the next one, whose checksum covers the first. NIO's
/// client pipeline dropped such bytes with its HTTP decoder, and the next frame then
/// failed with `checksum mismatch in RPY frame #1` in the netns lab.
@Suite struct EagerServerTests {
    @Test func framesSentWithTheUpgradeAnswerAreNotLost() async throws {
        let first = RawBLIP.messageData(properties: [("Profile", "note"), ("n", "1")], body: [])
        let second = RawBLIP.messageData(properties: [("Profile", "note"), ("n", "2")], body: [])
        // MSG frames with no-reply (0x20); the second's CRC runs on from the first's.
        let server = try EagerWebSocketServer(
            subprotocol: BLIPWebSocket.subprotocol,
            first: RawBLIP.frame(number: 1, flags: 0x20, data: first, sentBefore: []),
            later: [RawBLIP.frame(number: 2, flags: 0x20, data: second, sentBefore: first)])
        let received = Mutex<[String]>([])
        try await BLIPWebSocket.connect(
            url: "ws://127.0.0.1:\(server.port)/db/_blipsync", heartbeat: nil, logger: Logger(label: "test")
        ) { connection in
            connection.setHandler(for: "note") { message in
                received.withLock { $0.append(message["n"] ?? "?") }
                return BLIPMessage()
            }
            let done = await eventually(timeout: .seconds(20)) { received.withLock { $0.contains("2") } }
            #expect(done, "the second frame never arrived (connection closed: \(connection.isClosed))")
            await connection.close()
        }
        #expect(received.withLock { $0 }.last == "2")
    }
}
