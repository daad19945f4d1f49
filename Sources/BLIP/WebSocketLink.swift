import NIOCore
import NIOWebSocket
import Synchronization

/// One WebSocket connection carrying BLIP, driven by a `BLIPWebSocketHandler` in
/// its NIO channel: the transport side (`send`, `close`, `inbound`) is used from any
/// task; the handler side runs on the channel's event loop.
///
/// Frames are written in bursts: `send(frames:)` hands all the frames the BLIP
/// writer has ready to the event loop at once, where they are written and flushed
/// once (one `writev`). Inbound frames of one socket read are queued together and
/// the reader takes them as one batch (one task wake-up per read, not per frame).
///
/// Backpressure both ways: `send` suspends while the channel is not writable, and
/// the handler stops reading from the socket while more than `maxBufferedBytes`
/// of received frames wait for the reader.
public final class WebSocketLink: BLIPTransport, @unchecked Sendable {
    /// Received bytes that may wait for the reader before the socket is no longer read.
    static let maxBufferedBytes = 4 << 20
    /// Bytes that may wait for the event loop before `send` waits.
    static let maxQueuedBytes = 1 << 20

    struct State {
        var events: [BLIPTransportEvent] = []
        var bufferedBytes = 0
        /// No more inbound events after those queued.
        var finished = false
        var reader: CheckedContinuation<Void, Never>?
        /// The handler stopped reading (backpressure); the reader resumes it.
        var readPaused = false
        var writable = true
        /// Bytes handed to the event loop and not yet written to the channel.
        var queuedBytes = 0
        var canSend: Bool { closed || (writable && queuedBytes <= WebSocketLink.maxQueuedBytes) }
        var writeWaiters: [CheckedContinuation<Void, Never>] = []
        /// Sends throw from now on.
        var closed = false
    }

    let state = Mutex(State())
    let eventLoop: any EventLoop
    /// Set once the handler is in the pipeline; only touched on `eventLoop`.
    private var handlerBox: BLIPWebSocketHandler?

    /// The subprotocol the server answered the upgrade with (client side; nil on the
    /// server side, where the HTTP layer chose it).
    public let subprotocol: String?

    init(eventLoop: any EventLoop, subprotocol: String? = nil) {
        self.eventLoop = eventLoop
        self.subprotocol = subprotocol
    }

    /// The handler (event loop only).
    var handler: BLIPWebSocketHandler? {
        get {
            eventLoop.preconditionInEventLoop()
            return handlerBox
        }
        set {
            eventLoop.preconditionInEventLoop()
            handlerBox = newValue
        }
    }

    /// The error `send` throws once the link is closed.
    public static let closedError = BLIPError(code: BLIPError.Code.connectionClosed, message: "WebSocket closed")

    // MARK: Transport side (any task)

    public func send(_ frame: [UInt8]) async throws {
        try await send(frames: [frame])
    }

    public func send(frames: [[UInt8]]) async throws {
        guard !frames.isEmpty else { return }
        if state.withLock({ $0.closed }) {
            throw Self.closedError
        }
        var buffers: [ByteBuffer] = []
        buffers.reserveCapacity(frames.count)
        var bytes = 0
        for frame in frames {
            buffers.append(ByteBuffer(bytes: frame))
            bytes += frame.count
        }
        let canSend = state.withLock { state -> Bool in
            state.queuedBytes += bytes
            return state.canSend
        }
        eventLoop.execute { [self, buffers, bytes] in
            handler?.writeFrames(buffers)
            written(bytes)
        }
        // Backpressure: wait while the socket (or the event loop) does not take more.
        if canSend {
            return
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.canSend { return true }
                state.writeWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
        if state.withLock({ $0.closed }) {
            throw Self.closedError
        }
    }

    public func close(error: BLIPError?) async {
        channelClosed()
        let code = error.map { $0.webSocketCloseCode } ?? 1000
        let reason = error.map { String($0.message.prefix(120)) }
        eventLoop.execute { [self] in
            handler?.beginClose(code: WebSocketErrorCode(codeNumber: Int(code)), reason: reason)
        }
    }

    /// The received frames, in order, ending with `.closed` (or just ending after a
    /// local `close`).
    public var inbound: Inbound { Inbound(link: self) }

    /// The inbound events as an async sequence (one consumer).
    public struct Inbound: AsyncSequence, Sendable {
        public typealias Element = BLIPTransportEvent
        public typealias Failure = Never
        let link: WebSocketLink

        /// Hands out the queued frames of one batch, then waits for the next batch.
        public struct AsyncIterator: AsyncIteratorProtocol {
            let link: WebSocketLink
            var batch: [BLIPTransportEvent] = []
            var index = 0

            public mutating func next() async -> BLIPTransportEvent? {
                if index == batch.count {
                    batch = await link.takeBatch()
                    index = 0
                    if batch.isEmpty { return nil }
                }
                defer { index += 1 }
                return batch[index]
            }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(link: link) }
    }

    /// Everything queued; empty once the inbound side finished.
    func takeBatch() async -> [BLIPTransportEvent] {
        while true {
            enum Step { case events([BLIPTransportEvent], resume: Bool), finished, wait }
            let step = state.withLock { state -> Step in
                if !state.events.isEmpty {
                    let events = state.events
                    state.events = []
                    state.bufferedBytes = 0
                    let resume = state.readPaused
                    state.readPaused = false
                    return .events(events, resume: resume)
                }
                return state.finished ? .finished : .wait
            }
            switch step {
            case .events(let events, let resume):
                if resume {
                    eventLoop.execute { [self] in handler?.resumeReading() }
                }
                return events
            case .finished:
                return []
            case .wait:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { state -> Bool in
                        if !state.events.isEmpty || state.finished { return true }
                        state.reader = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
        }
    }

    // MARK: Handler side (event loop)

    /// Queues received events for the reader; returns true if reading should pause.
    func deliver(_ events: [BLIPTransportEvent], bytes: Int, finish: Bool = false) -> Bool {
        let (reader, pause) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Bool) in
            guard !state.finished else { return (nil, false) }
            state.events.append(contentsOf: events)
            state.bufferedBytes += bytes
            if finish {
                state.finished = true
            }
            let pause = state.bufferedBytes > Self.maxBufferedBytes
            if pause {
                state.readPaused = true
            }
            defer { state.reader = nil }
            return (state.reader, pause)
        }
        reader?.resume()
        return pause
    }

    /// The channel is gone: the reader ends after what is queued, sends throw.
    func channelClosed() {
        let reader = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.closed = true
            state.finished = true
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume()
        releaseWriters()
    }

    func setWritable(_ writable: Bool) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.writable = writable
            guard state.canSend else { return [] }
            defer { state.writeWaiters = [] }
            return state.writeWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The event loop took `bytes` handed over by `send`.
    private func written(_ bytes: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.queuedBytes -= bytes
            guard state.canSend, !state.writeWaiters.isEmpty else { return [] }
            defer { state.writeWaiters = [] }
            return state.writeWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func releaseWriters() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.writeWaiters = [] }
            return state.writeWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
