/// Counters of one connection, for metrics and tests.
public struct BLIPStatistics: Sendable, Equatable {
    /// Frames sent (ACK frames included).
    public var framesSent = 0
    /// Frames received (ACK frames included).
    public var framesReceived = 0
    /// Bytes of all frames sent (headers and checksums included).
    public var bytesSent = 0
    /// Bytes of all frames received.
    public var bytesReceived = 0
    /// Complete messages sent (requests, replies, errors; not ACKs).
    public var messagesSent = 0
    /// Complete messages received (requests, replies, errors; not ACKs).
    public var messagesReceived = 0
    /// ACK frames sent.
    public var acksSent = 0
    /// ACK frames received.
    public var acksReceived = 0
    /// Frames ignored and messages dropped as frame errors.
    public var frameErrors = 0
    /// Largest number of unacknowledged bytes any outgoing message reached; flow
    /// control keeps it below `maxUnackedBytes` plus one frame.
    public var peakUnackedBytes = 0
    /// Times a message was paused by flow control.
    public var flowControlPauses = 0

    /// All zero.
    public init() {}
}
