import NIOCore
import NIOWebSocket

/// The NIO channel handler of a BLIP WebSocket (after the upgrade, behind NIO's
/// WebSocket frame encoder and decoder): binary messages become BLIP frames for the
/// `WebSocketLink`, the link's frames go out as binary messages (masked on the client
/// side, through its `MaskedFrameWriter`), written together and flushed once per
/// burst. It answers pings, sends its own pings for the heartbeat, and runs the
/// closing handshake.
///
/// It consumes every frame; nothing reaches handlers behind it. Frames written by
/// handlers behind it (on the server side, the WebSocket layer of the HTTP server,
/// which stays idle) are dropped, except a close frame, which starts the closing
/// handshake.
///
/// Heartbeat: with a ping period, a ping goes out every period; if nothing at all
/// arrived from the peer since the previous ping, the peer is gone: the link gets
/// `.closed(error)` and the channel is closed. So a silent peer is dropped after one
/// to two periods. Only a period in which this side could have heard the peer counts:
/// while reading is paused (the link's reader, on the cooperative pool, has not taken
/// what was delivered, so the peer's pong waits unread in the socket), and when the
/// tick itself comes late (this event loop was blocked), the deadline moves on by a
/// period: our own stall never makes the peer look silent.
final class BLIPWebSocketHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    enum CloseState {
        case open
        /// We sent a close frame and wait for the peer's.
        case closeSent
        /// The handshake is over (or the channel is gone).
        case done
    }

    let link: WebSocketLink
    let pingPeriod: TimeAmount?
    let closeTimeout: TimeAmount
    let maxMessageSize: Int
    /// A client's frames go out through it, masked; nil on the server side, whose frames
    /// go to NIO's encoder unmasked.
    let maskedWriter: MaskedFrameWriter?

    private var context: ChannelHandlerContext?
    private var closeState = CloseState.open
    /// Events of the current read burst, handed to the link at `channelReadComplete`.
    private var pending: [BLIPTransportEvent] = []
    private var pendingBytes = 0
    /// A fragmented message being reassembled.
    private var fragments: ByteBuffer?
    private var fragmentsAreText = false
    private var readPaused = false
    private var readRequested = false
    private var pingTask: RepeatedTask?
    private var heardSincePing = true
    /// Reading was paused at some time since the last ping.
    private var pausedSincePing = false
    /// When the last heartbeat tick ran (to see a late one).
    private var lastTick: NIODeadline?
    private var pingCount: UInt64 = 0
    /// True once the link was told how the connection ended.
    private var reported = false

    init(
        link: WebSocketLink, pingPeriod: TimeAmount?, closeTimeout: TimeAmount, maxMessageSize: Int,
        maskedWriter: MaskedFrameWriter? = nil
    ) {
        self.link = link
        self.maskedWriter = maskedWriter
        self.pingPeriod = pingPeriod
        self.closeTimeout = closeTimeout
        self.maxMessageSize = maxMessageSize
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        link.handler = self
        link.setWritable(context.channel.isWritable)
        if let pingPeriod {
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            pingTask = context.eventLoop.scheduleRepeatedTask(initialDelay: pingPeriod, delay: pingPeriod) { _ in
                bound.value.heartbeat()
            }
        }
        if !context.channel.isActive {
            channelGone(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        pingTask?.cancel()
        pingTask = nil
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        channelGone(context: context)
        context.fireChannelInactive()
    }

    /// The peer's end of the TCP connection is closed. An HTTP server that allows
    /// half-closure (Hummingbird does) reports that as this event and keeps the channel
    /// open, so without it a peer gone without a close frame (killed, its socket closed)
    /// stayed connected here until the next ping found it gone. No frame can follow: the
    /// connection is over (clean if the closing handshake already was).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .inputClosed? = event as? ChannelEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        channelGone(context: context)
        context.close(promise: nil)
    }

    private func channelGone(context: ChannelHandlerContext) {
        pingTask?.cancel()
        pingTask = nil
        closeState = .done
        report(.closed(BLIPError(code: BLIPError.Code.connectionClosed, message: "WebSocket connection lost")))
        link.channelClosed()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOWebSocketError {
            let code: WebSocketErrorCode = error == .invalidFrameLength ? .messageTooLarge : .protocolError
            fail(.protocolError("WebSocket: \(error)"), code: code, context: context)
        } else {
            report(.closed(BLIPError(code: BLIPError.Code.connectionClosed, message: "WebSocket failed: \(error)")))
            closeState = .done
            context.close(promise: nil)
        }
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        heardSincePing = true
        switch frame.opcode {
        case .binary, .text:
            guard fragments == nil else {
                fail(.protocolError("WebSocket: new message inside a fragmented one"), code: .protocolError, context: context)
                return
            }
            if frame.fin {
                deliverMessage(frame.unmaskedPayload, text: frame.opcode == .text)
            } else {
                fragments = frame.unmaskedPayload
                fragmentsAreText = frame.opcode == .text
            }
        case .continuation:
            guard var buffer = fragments else {
                fail(.protocolError("WebSocket: continuation frame without a message"), code: .protocolError, context: context)
                return
            }
            var data = frame.unmaskedPayload
            guard buffer.readableBytes + data.readableBytes <= maxMessageSize else {
                fail(.protocolError("WebSocket message larger than \(maxMessageSize) bytes"), code: .messageTooLarge,
                     context: context)
                return
            }
            fragments = nil  // keep the buffer uniquely referenced while appending
            buffer.writeBuffer(&data)
            if frame.fin {
                deliverMessage(buffer, text: fragmentsAreText)
            } else {
                fragments = buffer
            }
        case .ping:
            guard closeState == .open else { return }
            write(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedPayload), context: context)
            context.flush()
        case .pong:
            break
        case .connectionClose:
            receivedClose(frame, context: context)
        default:
            fail(.protocolError("WebSocket: unknown opcode \(frame.opcode)"), code: .protocolError, context: context)
        }
    }

    private func deliverMessage(_ buffer: ByteBuffer, text: Bool) {
        guard closeState == .open else { return }
        if text {
            pending.append(.text(String(buffer: buffer)))
        } else {
            pending.append(.binary(Array(buffer.readableBytesView)))
        }
        pendingBytes += buffer.readableBytes
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushPending()
    }

    private func flushPending() {
        guard !pending.isEmpty else { return }
        let events = pending
        pending = []
        let bytes = pendingBytes
        pendingBytes = 0
        if link.deliver(events, bytes: bytes) {
            readPaused = true
            pausedSincePing = true
        }
    }

    func read(context: ChannelHandlerContext) {
        if readPaused {
            readRequested = true
        } else {
            context.read()
        }
    }

    /// The reader took the queued frames: read from the socket again.
    func resumeReading() {
        readPaused = false
        if readRequested, let context {
            readRequested = false
            context.read()
        }
    }

    // MARK: Writing

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // Frames from handlers behind this one: only a close frame means something.
        let frame = unwrapOutboundIn(data)
        promise?.succeed(())
        if frame.opcode == .connectionClose {
            var data = frame.unmaskedPayload
            let code = data.readWebSocketErrorCode() ?? .normalClosure
            let reason = data.readString(length: data.readableBytes)
            report(.closed(nil))
            beginClose(code: code, reason: reason)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        link.setWritable(context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    /// Writes BLIP frames as binary messages and flushes once.
    func writeFrames(_ buffers: [ByteBuffer]) {
        guard closeState == .open, let context else { return }
        for buffer in buffers {
            write(WebSocketFrame(fin: true, opcode: .binary, data: buffer), context: context)
        }
        context.flush()
    }

    private func write(_ frame: WebSocketFrame, context: ChannelHandlerContext, promise: EventLoopPromise<Void>? = nil) {
        if let maskedWriter {
            maskedWriter.write(frame, promise: promise)
        } else {
            context.write(wrapOutboundOut(frame), promise: promise)
        }
    }

    // MARK: Closing

    /// Sends a close frame (once); the channel closes when the peer answers, or
    /// after `closeTimeout`.
    func beginClose(code: WebSocketErrorCode, reason: String?) {
        guard closeState == .open, let context else { return }
        closeState = .closeSent
        var data = context.channel.allocator.buffer(capacity: 2 + (reason?.utf8.count ?? 0))
        data.write(webSocketErrorCode: code)
        if let reason { data.writeString(reason) }
        write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), context: context)
        context.flush()
        let channel = context.channel
        context.eventLoop.scheduleTask(in: closeTimeout) { channel.close(promise: nil) }
    }

    private func receivedClose(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        switch closeState {
        case .open:
            var data = frame.unmaskedPayload
            let code = data.readWebSocketErrorCode()
            let reason = data.readString(length: data.readableBytes) ?? ""
            switch code {
            case nil, .normalClosure?, .goingAway?:
                report(.closed(nil))
            case let code?:
                report(.closed(BLIPError(
                    code: BLIPError.Code.connectionClosed, message: "WebSocket closed by the peer: \(code) \(reason)")))
            }
            closeState = .done
            var echo = context.channel.allocator.buffer(capacity: 2)
            echo.write(webSocketErrorCode: code ?? .normalClosure)
            let promise = context.eventLoop.makePromise(of: Void.self)
            write(WebSocketFrame(fin: true, opcode: .connectionClose, data: echo), context: context, promise: promise)
            context.flush()
            let channel = context.channel
            promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
        case .closeSent:
            closeState = .done
            context.close(promise: nil)
        case .done:
            break
        }
    }

    /// A fatal error on this side: tell the link, close with `code`.
    private func fail(_ error: BLIPError, code: WebSocketErrorCode, context: ChannelHandlerContext) {
        report(.closed(error))
        beginClose(code: code, reason: String(error.message.prefix(120)))
    }

    private func heartbeat() {
        guard closeState == .open, let context else { return }
        let now = NIODeadline.now()
        if !heardSincePing && !stalledSinceLastTick(now: now) {
            report(.closed(BLIPError(
                code: BLIPError.Code.connectionClosed, message: "WebSocket peer silent (no answer to ping)")))
            beginClose(code: .goingAway, reason: "Ping timeout")
            closeState = .done
            context.close(promise: nil)
            return
        }
        heardSincePing = false
        pausedSincePing = readPaused
        lastTick = now
        pingCount &+= 1
        var data = context.channel.allocator.buffer(capacity: 8)
        data.writeInteger(pingCount)
        write(WebSocketFrame(fin: true, opcode: .ping, data: data), context: context)
        context.flush()
    }

    /// Whether this side may be why nothing was heard since the last tick: reading was
    /// paused meanwhile, or this tick runs more than half a period late.
    private func stalledSinceLastTick(now: NIODeadline) -> Bool {
        if readPaused || pausedSincePing { return true }
        guard let lastTick, let pingPeriod else { return false }
        return now - lastTick > TimeAmount.nanoseconds(pingPeriod.nanoseconds * 3 / 2)
    }

    /// Tells the link how the connection ended (the first reason wins).
    private func report(_ event: BLIPTransportEvent) {
        guard !reported else { return }
        reported = true
        flushPending()
        _ = link.deliver([event], bytes: 0, finish: true)
    }
}
