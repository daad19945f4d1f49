/// An error reply (ERR message) or a local failure, with BLIP's Error-Domain / Error-Code.
///
/// In domain `"BLIP"` the codes are HTTP-like statuses (400 bad request, 404 no handler,
/// 501 handler failed, …). Shoal adds two local codes in that domain: 502
/// (`connectionClosed`: the connection ended before the reply) and 1002 (a fatal
/// protocol error in the peer's data; the WebSocket close code for a protocol error).
public struct BLIPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The error domain; `"BLIP"` unless the peer or application says otherwise.
    public var domain: String
    /// The error code, interpreted within `domain`.
    public var code: Int
    /// A human-readable message (the body of an ERR message).
    public var message: String
    /// Extra properties carried by the ERR message besides Error-Domain and Error-Code.
    public var properties: [(String, String)]

    /// Creates an error.
    public init(domain: String = "BLIP", code: Int, message: String = "", properties: [(String, String)] = []) {
        self.domain = domain
        self.code = code
        self.message = message
        self.properties = properties
    }

    /// Well-known codes of the `"BLIP"` domain.
    public enum Code: Sendable {
        /// The request (or a message) was malformed.
        public static let badRequest = 400
        /// The request is not allowed.
        public static let forbidden = 403
        /// No handler is registered for the request's Profile.
        public static let notFound = 404
        /// Range error.
        public static let badRange = 416
        /// The request was cancelled locally before its reply arrived (Shoal).
        public static let cancelled = 499
        /// The handler failed with an error that was not a `BLIPError`.
        public static let handlerFailed = 501
        /// The connection closed before the reply arrived (Shoal).
        public static let connectionClosed = 502
        /// Unspecified error (also used for an ERR message without a valid Error-Code).
        public static let unspecified = 599
        /// A fatal protocol error in the peer's data (Shoal; = WebSocket close code 1002).
        public static let protocolError = 1002
    }

    /// The message of the ERR BLIP/404 that answers a request no handler takes: Sync
    /// Gateway's wording, which Couchbase Lite's replicator recognizes.
    public static let noHandlerMessage = "No handler for BLIP request"

    /// The connection closed (cleanly) before the operation completed.
    public static let connectionClosed = BLIPError(code: Code.connectionClosed, message: "connection closed")

    /// The waiting task was cancelled before the reply arrived.
    public static let cancelled = BLIPError(code: Code.cancelled, message: "request cancelled")

    /// A fatal protocol error: the connection is closed with this error.
    public static func protocolError(_ message: String) -> BLIPError {
        BLIPError(code: Code.protocolError, message: "BLIP protocol error: \(message)")
    }

    /// The connection ended before the reply (BLIP 502): nothing was refused, and the
    /// request may be sent again on another connection.
    public var isConnectionLoss: Bool {
        domain == "BLIP" && code == Code.connectionClosed
    }

    /// True for fatal protocol errors detected in the peer's data.
    public var isProtocolError: Bool {
        domain == "BLIP" && code == Code.protocolError
    }

    /// The WebSocket close code that fits this error when it closes a connection:
    /// 1002 for protocol errors, the code itself in domain `"WebSocket"`, else 1011.
    public var webSocketCloseCode: UInt16 {
        if isProtocolError { return 1002 }
        if domain == "WebSocket", let code = UInt16(exactly: code), (1000...4999).contains(code) {
            return code
        }
        return 1011
    }

    public var description: String {
        var text = "BLIPError(\(domain) \(code)"
        if !message.isEmpty { text += ": \(message)" }
        if !properties.isEmpty {
            text += " [" + properties.map { "\($0.0)=\($0.1)" }.joined(separator: ", ") + "]"
        }
        return text + ")"
    }

    public static func == (lhs: BLIPError, rhs: BLIPError) -> Bool {
        lhs.domain == rhs.domain && lhs.code == rhs.code && lhs.message == rhs.message
            && propertiesEqual(lhs.properties, rhs.properties)
    }
}

extension BLIPError {
    /// The ERR message that carries this error: Error-Domain, Error-Code, the extra
    /// properties, and the message as UTF-8 body.
    func errorMessage(urgent: Bool = false) -> BLIPMessage {
        var props: [(String, String)] = [("Error-Domain", domain), ("Error-Code", String(code))]
        props.append(contentsOf: properties.filter { $0.0 != "Error-Domain" && $0.0 != "Error-Code" })
        return BLIPMessage(properties: props, body: Array(message.utf8), urgent: urgent)
    }

    /// Reads an ERR message. A missing domain means `"BLIP"`; a missing or invalid code
    /// (not a decimal signed 32-bit integer) becomes 599 (unspecified).
    init(errorReply message: BLIPMessage) {
        let domain = message["Error-Domain"] ?? "BLIP"
        let code = message["Error-Code"].flatMap { Int32($0) }.map(Int.init) ?? Code.unspecified
        self.init(
            domain: domain,
            code: code,
            message: String(decoding: message.body, as: UTF8.self),
            properties: message.properties.filter { $0.0 != "Error-Domain" && $0.0 != "Error-Code" }
        )
    }
}
