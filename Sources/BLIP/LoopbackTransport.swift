import Synchronization

/// Two connected in-memory transports, so that two `BLIPConnection`s can talk in
/// one process with no sockets (tests, benchmarks).
///
/// What one end sends arrives, in order, in the other end's `inbound`. Closing
/// either end closes both: the other end's `inbound` delivers `.closed(error)` and
/// finishes, the closing end's `inbound` finishes, and later sends throw. Sends
/// never block (the buffer is unbounded; BLIP's flow control keeps it small).
public enum LoopbackTransport: Sendable {
    /// The error `send` throws after the pair was closed.
    public struct ClosedError: Error, Sendable, Equatable {}

    /// Creates a connected pair.
    public static func pair() -> (End, End) {
        let (streamA, continuationA) = AsyncStream.makeStream(of: BLIPTransportEvent.self)
        let (streamB, continuationB) = AsyncStream.makeStream(of: BLIPTransportEvent.self)
        let shared = Shared()
        let a = End(inbound: streamA, own: continuationA, peer: continuationB, shared: shared)
        let b = End(inbound: streamB, own: continuationB, peer: continuationA, shared: shared)
        return (a, b)
    }

    final class Shared: Sendable {
        let closed = Mutex(false)
    }

    /// One end of a loopback pair.
    public final class End: BLIPTransport {
        /// What the other end sent.
        public let inbound: AsyncStream<BLIPTransportEvent>
        private let own: AsyncStream<BLIPTransportEvent>.Continuation
        private let peer: AsyncStream<BLIPTransportEvent>.Continuation
        private let shared: Shared

        init(inbound: AsyncStream<BLIPTransportEvent>, own: AsyncStream<BLIPTransportEvent>.Continuation,
             peer: AsyncStream<BLIPTransportEvent>.Continuation, shared: Shared)
        {
            self.inbound = inbound
            self.own = own
            self.peer = peer
            self.shared = shared
        }

        /// True once either end closed.
        public var isClosed: Bool { shared.closed.withLock { $0 } }

        public func send(_ frame: [UInt8]) async throws {
            // Check and yield under the lock, so that nothing follows `.closed`.
            let sent = shared.closed.withLock { closed -> Bool in
                guard !closed else { return false }
                peer.yield(.binary(frame))
                return true
            }
            if !sent {
                throw ClosedError()
            }
        }

        /// Delivers a text message to the other end (to test that BLIP rejects it).
        public func sendText(_ text: String) {
            shared.closed.withLock { closed in
                if !closed {
                    peer.yield(.text(text))
                }
            }
        }

        public func close(error: BLIPError?) async {
            let first = shared.closed.withLock { closed -> Bool in
                defer { closed = true }
                if !closed {
                    peer.yield(.closed(error))
                }
                return !closed
            }
            if first {
                peer.finish()
                own.finish()
            }
        }
    }
}
