import Synchronization

/// A fault-injecting wrapper around any transport and its inbound events (tests).
///
/// It can cut the connection after a number of frames (in either direction),
/// delay frames, and corrupt one byte of one frame. Reordering frames is not a
/// fault a BLIP transport can have (WebSocket delivers in order), so it is not
/// offered. When it cuts the connection it closes the wrapped transport with
/// `FaultyTransport.droppedError` and delivers `.closed(droppedError)` on `inbound`.
public final class FaultyTransport: BLIPTransport {
    /// The faults to inject.
    public struct Faults: Sendable {
        /// Cut the connection when this many frames have been sent (the frame that
        /// would exceed the count is not sent).
        public var dropAfterSentFrames: Int?
        /// Cut the connection when this many frames have been received.
        public var dropAfterReceivedFrames: Int?
        /// Delay before each sent frame.
        public var sendDelay: Duration?
        /// Delay before each received frame is delivered.
        public var receiveDelay: Duration?
        /// Corrupt (XOR 0xFF) one byte of the sent frame with this index (0-based):
        /// the byte at `corruptByteOffset` modulo the frame's length.
        public var corruptSentFrame: Int?
        /// Corrupt one byte of the received frame with this index (0-based).
        public var corruptReceivedFrame: Int?
        /// Which byte of the frame to corrupt; negative counts from the end.
        public var corruptByteOffset: Int = -1

        /// No faults.
        public init(
            dropAfterSentFrames: Int? = nil, dropAfterReceivedFrames: Int? = nil,
            sendDelay: Duration? = nil, receiveDelay: Duration? = nil,
            corruptSentFrame: Int? = nil, corruptReceivedFrame: Int? = nil, corruptByteOffset: Int = -1
        ) {
            self.dropAfterSentFrames = dropAfterSentFrames
            self.dropAfterReceivedFrames = dropAfterReceivedFrames
            self.sendDelay = sendDelay
            self.receiveDelay = receiveDelay
            self.corruptSentFrame = corruptSentFrame
            self.corruptReceivedFrame = corruptReceivedFrame
            self.corruptByteOffset = corruptByteOffset
        }
    }

    /// The error the connection is cut with.
    public static let droppedError = BLIPError(
        code: BLIPError.Code.connectionClosed, message: "connection dropped (fault injection)")

    private struct Counters {
        var sent = 0
        var received = 0
        var dropped = false
    }

    /// The wrapped transport's inbound events, with the faults applied.
    public let inbound: AsyncStream<BLIPTransportEvent>
    private let wrapped: any BLIPTransport
    private let faults: Faults
    private let counters: Mutex<Counters>
    private let inboundContinuation: AsyncStream<BLIPTransportEvent>.Continuation

    /// Wraps `transport`, whose incoming events are `inbound`.
    public init(wrapping transport: any BLIPTransport,
                inbound source: some AsyncSequence<BLIPTransportEvent, Never> & Sendable,
                faults: Faults)
    {
        wrapped = transport
        self.faults = faults
        counters = Mutex(Counters())
        let (stream, continuation) = AsyncStream.makeStream(of: BLIPTransportEvent.self)
        inbound = stream
        inboundContinuation = continuation
        let pump = Task { [weak self] in
            for await event in source {
                guard let self else { return }
                guard await self.deliver(event) else { return }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in pump.cancel() }
    }

    /// Frames sent through the wrapper so far.
    public var sentFrames: Int { counters.withLock { $0.sent } }
    /// Frames received through the wrapper so far.
    public var receivedFrames: Int { counters.withLock { $0.received } }
    /// True once the fault cut the connection.
    public var didDrop: Bool { counters.withLock { $0.dropped } }

    public func send(_ frame: [UInt8]) async throws {
        if let delay = faults.sendDelay {
            try? await Task.sleep(for: delay)
        }
        let (index, drop) = counters.withLock { counters -> (Int, Bool) in
            if counters.dropped { return (counters.sent, true) }
            if let limit = faults.dropAfterSentFrames, counters.sent >= limit {
                return (counters.sent, true)
            }
            counters.sent += 1
            return (counters.sent - 1, false)
        }
        if drop {
            await cut()
            throw Self.droppedError
        }
        try await wrapped.send(faults.corruptSentFrame == index ? corrupt(frame) : frame)
    }

    public func close(error: BLIPError?) async {
        await wrapped.close(error: error)
    }

    /// Passes one inbound event on; false when the pump should stop.
    private func deliver(_ event: BLIPTransportEvent) async -> Bool {
        guard case .binary(let frame) = event else {
            inboundContinuation.yield(event)
            if case .closed = event {
                inboundContinuation.finish()
                return false
            }
            return true
        }
        if let delay = faults.receiveDelay {
            try? await Task.sleep(for: delay)
        }
        let (index, drop) = counters.withLock { counters -> (Int, Bool) in
            if counters.dropped { return (counters.received, true) }
            if let limit = faults.dropAfterReceivedFrames, counters.received >= limit {
                return (counters.received, true)
            }
            counters.received += 1
            return (counters.received - 1, false)
        }
        if drop {
            await cut()
            return false
        }
        inboundContinuation.yield(.binary(faults.corruptReceivedFrame == index ? corrupt(frame) : frame))
        return true
    }

    private func corrupt(_ frame: [UInt8]) -> [UInt8] {
        guard !frame.isEmpty else { return frame }
        var frame = frame
        let count = frame.count
        let offset = ((faults.corruptByteOffset % count) + count) % count
        frame[offset] ^= 0xFF
        return frame
    }

    /// Cuts the connection: closes the wrapped transport and ends `inbound`.
    private func cut() async {
        let first = counters.withLock { counters -> Bool in
            defer { counters.dropped = true }
            return !counters.dropped
        }
        guard first else { return }
        inboundContinuation.yield(.closed(Self.droppedError))
        inboundContinuation.finish()
        await wrapped.close(error: Self.droppedError)
    }
}
