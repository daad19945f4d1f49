import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing
import TestSupport

@testable import BLIP

/// `BLIPWebSocketHandler` behind NIO's WebSocket frame decoder, in an EmbeddedChannel:
/// raw bytes in (one at a time and all at once), transport events out; frames,
/// pongs and closing frames written.
@Suite(.ownThread) struct WebSocketHandlerTests {
    static func makeChannel(pingPeriod: TimeAmount? = nil) throws -> (EmbeddedChannel, WebSocketLink) {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        let link = WebSocketLink(eventLoop: channel.eventLoop)
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 16)))
        try channel.pipeline.syncOperations.addHandler(BLIPWebSocketHandler(
            link: link, pingPeriod: pingPeriod, closeTimeout: .seconds(2), maxMessageSize: 1 << 16))
        return (channel, link)
    }

    /// The wire bytes of one frame as a client sends it (masked).
    static func frameBytes(_ opcode: WebSocketOpcode, fin: Bool = true, _ payload: [UInt8], masked: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | UInt8(webSocketOpcode: opcode)]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            bytes.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes.append(maskBit | 126)
            bytes += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            bytes += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        let key: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        if masked { bytes += key }
        for (index, byte) in payload.enumerated() { bytes.append(masked ? byte ^ key[index % 4] : byte) }
        return bytes
    }

    static func closePayload(_ code: UInt16, _ reason: String = "") -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
    }

    static func describe(_ event: BLIPTransportEvent) -> String {
        switch event {
        case .binary(let bytes): "binary \(bytes)"
        case .text(let text): "text \(text)"
        case .closed(let error): "closed \(error.map { "\($0.code)" } ?? "clean")"
        }
    }

    static func events(_ link: WebSocketLink) -> [String] {
        link.state.withLock { $0.events.map(describe) }
    }

    static let stream: [UInt8] =
        frameBytes(.binary, Array("abc".utf8))
        + frameBytes(.binary, fin: false, [1, 2]) + frameBytes(.continuation, fin: false, [3])
        + frameBytes(.continuation, [4])
        + frameBytes(.ping, [9, 9])  // answered, not delivered
        + frameBytes(.binary, Array(repeating: 7, count: 300))
        + frameBytes(.text, Array("hi".utf8))
        + frameBytes(.connectionClose, closePayload(1000))

    static let expected = [
        "binary \(Array("abc".utf8))", "binary [1, 2, 3, 4]", "binary \(Array(repeating: UInt8(7), count: 300))",
        "text hi", "closed clean",
    ]

    @Test func framesAllAtOnce() throws {
        let (channel, link) = try Self.makeChannel()
        try channel.writeInbound(ByteBuffer(bytes: Self.stream))
        #expect(Self.events(link) == Self.expected)
        #expect(link.state.withLock { $0.finished })
    }

    @Test func framesOneByteAtATime() throws {
        let (channel, link) = try Self.makeChannel()
        for byte in Self.stream {
            try channel.writeInbound(ByteBuffer(bytes: [byte]))
        }
        #expect(Self.events(link) == Self.expected)
    }

    @Test func pingIsAnsweredAndCloseIsEchoed() throws {
        let (channel, link) = try Self.makeChannel()
        try channel.writeInbound(ByteBuffer(bytes: Self.frameBytes(.ping, [1, 2, 3])))
        let pong = try #require(try channel.readOutbound(as: WebSocketFrame.self))
        #expect(pong.opcode == .pong && Array(pong.unmaskedData.readableBytesView) == [1, 2, 3])
        #expect(pong.maskKey == nil)  // the server side does not mask
        try channel.writeInbound(ByteBuffer(bytes: Self.frameBytes(.connectionClose, Self.closePayload(1000))))
        let echo = try #require(try channel.readOutbound(as: WebSocketFrame.self))
        #expect(echo.opcode == .connectionClose)
        var data = echo.unmaskedData
        #expect(data.readWebSocketErrorCode() == .normalClosure)
        channel.embeddedEventLoop.run()
        #expect(!channel.isActive)
        #expect(Self.events(link) == ["closed clean"])
    }

    @Test func errorCloseCodeIsAnErrorClose() throws {
        let (channel, link) = try Self.makeChannel()
        try channel.writeInbound(ByteBuffer(bytes: Self.frameBytes(.connectionClose, Self.closePayload(1011, "oops"))))
        #expect(Self.events(link) == ["closed \(BLIPError.Code.connectionClosed)"])
    }

    @Test(arguments: [
        frameBytes(.continuation, [1]),  // continuation without a message
        frameBytes(.binary, fin: false, [1]) + frameBytes(.binary, [2]),  // new message inside a fragmented one
        frameBytes(WebSocketOpcode(encodedWebSocketOpcode: 3)!, [1]),  // reserved opcode
        frameBytes(.binary, Array(repeating: 0, count: 70_000)),  // above the decoder's limit
    ])
    func malformedInputClosesWithAnError(bytes: [UInt8]) throws {
        for chunked in [false, true] {
            let (channel, link) = try Self.makeChannel()
            if chunked {
                for byte in bytes { _ = try? channel.writeInbound(ByteBuffer(bytes: [byte])) }
            } else {
                _ = try? channel.writeInbound(ByteBuffer(bytes: bytes))
            }
            let events = Self.events(link)
            #expect(events.last == "closed \(BLIPError.Code.protocolError)", "\(events)")
            let close = try #require(try channel.readOutbound(as: WebSocketFrame.self))
            #expect(close.opcode == .connectionClose)
            #expect(link.state.withLock { $0.finished })
        }
    }

    // A client's frames are masked by its MaskedFrameWriter (MaskedFrameWriterTests).
    @Test func framesAreWrittenTogetherUnmaskedOnTheServer() async throws {
        let (channel, link) = try Self.makeChannel()
        try await link.send(frames: [[1, 2, 3], [4], Array(repeating: 5, count: 1000)])
        channel.embeddedEventLoop.run()
        var written: [[UInt8]] = []
        while let frame = try channel.readOutbound(as: WebSocketFrame.self) {
            #expect(frame.opcode == .binary && frame.fin)
            #expect(frame.maskKey == nil)
            written.append(Array(frame.data.readableBytesView))
        }
        #expect(written == [[1, 2, 3], [4], Array(repeating: 5, count: 1000)])
    }

    @Test func localCloseSendsCloseFrameAndEndsTheLink() async throws {
        let (channel, link) = try Self.makeChannel()
        await link.close(error: .protocolError("bad"))
        channel.embeddedEventLoop.run()
        let close = try #require(try channel.readOutbound(as: WebSocketFrame.self))
        var data = close.unmaskedData
        #expect(close.opcode == .connectionClose && data.readWebSocketErrorCode() == .protocolError)
        var iterator = link.inbound.makeAsyncIterator()
        #expect(await iterator.next() == nil)
        await #expect(throws: BLIPError.self) { try await link.send([1]) }
        // The peer's answer ends the handshake.
        try channel.writeInbound(ByteBuffer(bytes: Self.frameBytes(.connectionClose, Self.closePayload(1002))))
        channel.embeddedEventLoop.run()
        #expect(!channel.isActive)
    }

    @Test func aPeerWhoseInputEndedIsGoneAtOnce() throws {
        // No heartbeat: only the end of the peer's input can end this connection.
        let (channel, link) = try Self.makeChannel()
        try channel.writeInbound(ByteBuffer(bytes: Self.frameBytes(.binary, Array("abc".utf8))))
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        channel.embeddedEventLoop.run()
        #expect(Self.events(link) == ["binary \(Array("abc".utf8))", "closed \(BLIPError.Code.connectionClosed)"])
        #expect(!channel.isActive)
    }

    @Test func inputEndingAfterTheClosingHandshakeKeepsTheCleanClose() throws {
        let (channel, link) = try Self.makeChannel()
        try channel.writeInbound(ByteBuffer(bytes: Self.frameBytes(.connectionClose, Self.closePayload(1000))))
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        channel.embeddedEventLoop.run()
        #expect(Self.events(link) == ["closed clean"])
    }

    @Test func silentPeerIsDroppedByTheHeartbeat() throws {
        let (channel, link) = try Self.makeChannel(pingPeriod: .milliseconds(100))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(100))
        let ping = try #require(try channel.readOutbound(as: WebSocketFrame.self))
        #expect(ping.opcode == .ping)
        // Anything from the peer counts as alive.
        try channel.writeInbound(ByteBuffer(bytes: Self.frameBytes(.pong, Array(ping.unmaskedData.readableBytesView))))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(100))
        #expect(try channel.readOutbound(as: WebSocketFrame.self)?.opcode == .ping)
        #expect(Self.events(link).isEmpty)
        // Silence for a whole period: gone.
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(100))
        #expect(Self.events(link) == ["closed \(BLIPError.Code.connectionClosed)"])
        #expect(!channel.isActive)
    }

    /// The link's reader stalls (it runs on the cooperative pool, which a blocking call
    /// can hold) for 5 s of the event loop's time while the peer keeps sending: reading
    /// pauses, so the peer's pongs stay unread in the socket. The link must stay up; once
    /// the reader takes what was queued and reading resumes, the heartbeat judges again.
    @Test func aLocalStallOfFiveSecondsDoesNotMakeThePeerSilent() throws {
        let (channel, link) = try Self.makeChannel(pingPeriod: .milliseconds(750))
        // More than the link buffers: reading pauses, nobody takes the frames.
        let message = Self.frameBytes(.binary, Array(repeating: 1, count: 60_000))
        for _ in 0..<((WebSocketLink.maxBufferedBytes / 60_000) + 2) {
            try channel.writeInbound(ByteBuffer(bytes: message))
        }
        #expect(link.state.withLock { $0.readPaused })
        for _ in 0..<7 {  // 5.25 s, a ping every 0.75 s, none answered as far as we can read
            channel.embeddedEventLoop.advanceTime(by: .milliseconds(750))
            #expect(try channel.readOutbound(as: WebSocketFrame.self)?.opcode == .ping)
        }
        #expect(channel.isActive, "the peer was declared silent during our own stall")
        #expect(!Self.events(link).contains { $0.hasPrefix("closed") })
        // The reader catches up; reading resumes and the queued pong arrives.
        let taken = try #require(link.state.withLock { state -> Int? in
            let count = state.events.count
            state.events = []
            state.bufferedBytes = 0
            state.readPaused = false
            return count
        })
        #expect(taken > 0)
        channel.pipeline.handler(type: BLIPWebSocketHandler.self).whenSuccess { $0.resumeReading() }
        try channel.writeInbound(ByteBuffer(bytes: Self.frameBytes(.pong, [0, 0, 0, 0, 0, 0, 0, 7])))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(750))
        #expect(channel.isActive)
        // Then a peer that really is silent is still dropped, two periods later.
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(750))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(750))
        #expect(Self.events(link).last == "closed \(BLIPError.Code.connectionClosed)")
        #expect(!channel.isActive)
    }
}
