/// What carries BLIP frames: one frame = one binary WebSocket message.
///
/// Contract: frames are delivered reliably and in order. After `close(error:)`, the
/// inbound sequence given to `BLIPConnection.run(inbound:)` must end (deliver
/// `.closed` and/or finish), and `send` must throw instead of blocking forever.
public protocol BLIPTransport: Sendable {
    /// Sends one frame. May suspend for backpressure. Throws if the transport is closed.
    func send(_ frame: [UInt8]) async throws
    /// Closes the transport; `error` nil = normal closure (WebSocket 1000), else an
    /// error closure (see `BLIPError.webSocketCloseCode`: 1002 protocol error / 1011).
    /// Closing twice is harmless.
    func close(error: BLIPError?) async
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
