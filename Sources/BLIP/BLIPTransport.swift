/// What carries BLIP frames: one frame = one binary WebSocket message.
///
/// Contract: frames are delivered reliably and in order. After `close(error:)`, the
/// inbound sequence given to `BLIPConnection.run(inbound:)` must end (deliver
/// `.closed` and/or finish), and `send` must throw instead of blocking forever.
public protocol BLIPTransport: Sendable {
    /// Sends one frame. May suspend for backpressure. Throws if the transport is closed.
    func send(_ frame: [UInt8]) async throws
    /// Sends several frames in order. A transport that can write them together (one
    /// flush, one system call) should; the default sends them one by one.
    func send(frames: [[UInt8]]) async throws
    /// Closes the transport; `error` nil = normal closure (WebSocket 1000), else an
    /// error closure (see `BLIPError.webSocketCloseCode`: 1002 protocol error / 1011).
    /// Closing twice is harmless.
    func close(error: BLIPError?) async
}

extension BLIPTransport {
    /// Sends the frames one at a time with `send(_:)`.
    public func send(frames: [[UInt8]]) async throws {
        for frame in frames {
            try await send(frame)
        }
    }
}

/// What the transport delivers.
public enum BLIPTransportEvent: Sendable {
    /// One BLIP frame (a binary WebSocket message).
    case binary([UInt8])
    /// A text WebSocket message: fatal for BLIP.
    case text(String)
    /// The transport closed; nil = clean close by the peer.
    case closed(BLIPError?)
}
