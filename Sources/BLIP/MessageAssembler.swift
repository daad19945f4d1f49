/// Groups decoded frames into messages (pure: no I/O).
///
/// Tracks the incoming requests and replies in progress, enforces the numbering
/// rules (requests begin in sequence; replies only for requests that await one),
/// the size limits, and tells when an ACK is due. Throws only fatal errors; frame
/// errors come back as events.
struct MessageAssembler: Sendable {
    /// An incoming message whose last frame has not arrived yet.
    private struct Incoming: Sendable {
        var type: BLIPMessageType
        var flags: BLIPFrameFlags
        var data: [UInt8] = []
        /// Offset of the properties in `data` (after their length varint), once known.
        var propertiesStart = 0
        /// Offset of the body in `data`, once the properties length is known.
        var bodyStart: Int?
        var wireBytesReceived: UInt64 = 0
        var unackedBytes = 0
    }

    private let ackInterval: Int
    private let maxPropertiesSize: Int
    private let maxMessageSize: Int
    private var requests: [UInt64: Incoming] = [:]
    private var replies: [UInt64: Incoming] = [:]
    private var awaitingReply: Set<UInt64> = []
    private(set) var lastRequestReceived: UInt64 = 0
    private(set) var highestRequestSent: UInt64 = 0

    init(configuration: BLIPConfiguration) {
        ackInterval = max(1, configuration.ackInterval)
        maxPropertiesSize = max(0, configuration.maxPropertiesSize)
        maxMessageSize = max(0, configuration.maxMessageSize)
    }

    /// Number of incoming messages in progress.
    var incompleteCount: Int { requests.count + replies.count }

    /// Records that our request `number` was sent and, if `expectsReply`, that a reply
    /// (RPY or ERR) with that number is awaited.
    mutating func noteRequestSent(_ number: UInt64, expectsReply: Bool) {
        highestRequestSent = max(highestRequestSent, number)
        if expectsReply {
            awaitingReply.insert(number)
        }
    }

    /// Takes one decoded frame.
    mutating func receive(_ frame: BLIPFrame) throws(BLIPError) -> BLIPDecoderEvent {
        let number = frame.number
        guard let type = frame.flags.type else {
            return .ignoredFrame("frame of undefined type \(frame.flags.typeCode) for message #\(number)")
        }
        switch type {
        case .ackRequest, .ackResponse:
            return .acknowledged(type, number: number, byteCount: frame.ackByteCount)
        case .request:
            guard number != 0 else { throw .protocolError("request number 0") }
            if var message = requests.removeValue(forKey: number) {
                return try append(frame, to: &message, type: type)
            }
            if number == lastRequestReceived &+ 1 {
                lastRequestReceived = number
                var message = Incoming(type: .request, flags: frame.flags)
                return try append(frame, to: &message, type: type)
            }
            if number <= lastRequestReceived {
                return .ignoredFrame("frame for completed request #\(number)")
            }
            throw .protocolError("request #\(number) out of sequence (expected #\(lastRequestReceived &+ 1))")
        case .response, .error:
            guard number != 0 else { throw .protocolError("reply to request number 0") }
            if var message = replies.removeValue(forKey: number) {
                return try append(frame, to: &message, type: message.type)
            }
            if awaitingReply.remove(number) != nil {
                var message = Incoming(type: type, flags: frame.flags)
                return try append(frame, to: &message, type: type)
            }
            if number <= highestRequestSent {
                return .ignoredFrame("\(type) frame for request #\(number), which awaits no reply")
            }
            throw .protocolError("\(type) for request #\(number), which was never sent")
        }
    }

    /// Appends a frame to a message that was taken out of its table; puts it back
    /// unless the frame completes it.
    private mutating func append(
        _ frame: BLIPFrame, to message: inout Incoming, type: BLIPMessageType
    ) throws(BLIPError) -> BLIPDecoderEvent {
        let number = frame.number
        // Invariant: message.data.count <= maxMessageSize.
        guard frame.payload.count <= maxMessageSize - message.data.count else {
            throw .protocolError("\(type) #\(number) exceeds \(maxMessageSize) bytes")
        }
        if message.data.isEmpty {
            message.data = frame.payload
        } else {
            message.data.append(contentsOf: frame.payload)
        }
        if message.bodyStart == nil {
            let prefix: (value: UInt64, length: Int)?
            do {
                prefix = try BLIPVarint.decode(message.data)
            } catch .overflow {
                throw .protocolError("bad properties length varint in \(type) #\(number)")
            } catch {
                prefix = nil  // truncated: the rest of the varint comes with the next frame
            }
            if let prefix {
                guard prefix.value <= UInt64(maxPropertiesSize) else {
                    throw .protocolError(
                        "\(type) #\(number) has \(prefix.value) bytes of properties (limit \(maxPropertiesSize))")
                }
                message.propertiesStart = prefix.length
                message.bodyStart = prefix.length + Int(prefix.value)
            }
        }
        message.wireBytesReceived &+= UInt64(frame.wireSize)

        guard !frame.flags.contains(.moreComing) else {
            message.unackedBytes += frame.wireSize
            let received = message.wireBytesReceived
            var event = BLIPDecoderEvent.partial
            if message.unackedBytes >= ackInterval {
                message.unackedBytes = 0
                event = .shouldAcknowledge(type == .request ? .ackRequest : .ackResponse,
                                           number: number, byteCount: received)
            }
            if type == .request {
                requests[number] = message
            } else {
                replies[number] = message
            }
            return event
        }
        return try complete(message, number: number)
    }

    private func complete(_ message: Incoming, number: UInt64) throws(BLIPError) -> BLIPDecoderEvent {
        let type = message.type
        let noReply = type == .request && message.flags.contains(.noReply)
        guard let bodyStart = message.bodyStart else {
            throw .protocolError("\(type) #\(number) ends before its properties length")
        }
        guard bodyStart <= message.data.count else {
            return .malformedMessage(type, number: number, noReply: noReply, BLIPError(
                code: BLIPError.Code.badRequest,
                message: "properties (\(bodyStart - message.propertiesStart) bytes) are longer than the message "
                    + "(\(message.data.count - message.propertiesStart) bytes after the length)"))
        }
        let properties: [(String, String)]
        switch BLIPMessage.decodeProperties(message.data[message.propertiesStart..<bodyStart]) {
        case .success(let decoded):
            properties = decoded
        case .failure(let error):
            return .malformedMessage(type, number: number, noReply: noReply, error)
        }
        let result = BLIPMessage(
            properties: properties,
            body: Array(message.data[bodyStart...]),
            urgent: message.flags.contains(.urgent),
            compressed: message.flags.contains(.compressed),
            noReply: noReply
        )
        return .message(type, number: number, result)
    }
}
