import BLIP
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Logging
import WSClient

/// Dials a peer's `/{db}/_blipsync` over WebSocket (with HTTP Basic credentials
/// when given). When the upgrade is refused it asks the same URL over plain HTTP
/// to report the peer's status and reason (e.g. 401), since the WebSocket client
/// does not expose them.
public struct WebSocketDialer: BLIPDialer {
    let configuration: BLIPConfiguration
    let logger: Logger
    /// Sent with every upgrade request (e.g. this node's ID for the mesh).
    let extraHeaders: HTTPFields
    /// Headers made for each dial, given the URL (e.g. a fresh proof of the mesh secret).
    let dialHeaders: (@Sendable (String) -> HTTPFields)?

    public init(
        configuration: BLIPConfiguration = .init(), extraHeaders: HTTPFields = [:],
        dialHeaders: (@Sendable (String) -> HTTPFields)? = nil, logger: Logger = Logger(label: "Sync")
    ) {
        self.configuration = configuration
        self.extraHeaders = extraHeaders
        self.dialHeaders = dialHeaders
        self.logger = logger
    }

    /// The header a mesh node sends its node ID in.
    public static let nodeIDHeader = HTTPField.Name("X-Shoal-Node-ID")!

    public func dial(
        url: String, username: String?, password: String?, heartbeat: Duration,
        session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        var headers = extraHeaders
        if let dialHeaders {
            for field in dialHeaders(url) { headers[field.name] = field.value }
        }
        if let authorization = Self.basicAuthorization(username: username, password: password) {
            headers[.authorization] = authorization
        }
        // A peer behind a partition may accept nothing and answer nothing: give up on
        // the connect + upgrade after a while (the session itself has heartbeats).
        let fields = headers
        let attempt = DialAttempt()
        let dialTimeout = max(Duration.seconds(5), heartbeat * 3)
        try await attempt.run(
            deadline: dialTimeout, timeoutError: DialError("no answer from \(url) within \(dialTimeout)", permanent: false)
        ) { [configuration, logger] in
            do {
                try await BLIPWebSocket.connect(
                    url: url, headers: fields, heartbeat: heartbeat, configuration: configuration, logger: logger
                ) { connection in
                    // An abandoned attempt that connects late closes at once.
                    guard attempt.start() else { return }
                    try await session(connection)
                }
            } catch let error as WebSocketClientError where error == .webSocketUpgradeFailed {
                throw await Self.explainRefusal(url: url, headers: fields)
            }
        }
    }

    static func basicAuthorization(username: String?, password: String?) -> String? {
        guard let username, !username.isEmpty else { return nil }
        return "Basic " + Data("\(username):\(password ?? "")".utf8).base64EncodedString()
    }

    /// Probes the endpoint over HTTP, with the dial's headers, to learn why the upgrade
    /// was refused (e.g. 401 for bad credentials or a missing mesh secret, 404 for an
    /// unknown database).
    static func explainRefusal(url: String, headers: HTTPFields) async -> DialError {
        guard let httpURL = ReplicationConfiguration.httpURL(forRemote: url) else {
            return DialError("invalid URL \(url)", permanent: true)
        }
        var request = URLRequest(url: httpURL, timeoutInterval: 10)
        for field in headers { request.setValue(field.value, forHTTPHeaderField: field.name.rawName) }
        // A 401 with WWW-Authenticate arrives as an authentication challenge, which the
        // delegate records and declines (the default handling would wait for credentials).
        let delegate = ChallengeRecorder()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let answer = try? await session.data(for: request)
        if answer == nil, let status = delegate.status {
            return DialError("HTTP \(status) from \(url): authentication failed", permanent: true)
        }
        guard let (data, response) = answer, let status = (response as? HTTPURLResponse)?.statusCode
        else { return DialError("WebSocket upgrade to \(url) failed", permanent: false) }
        let reason = String(decoding: data.prefix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return DialError("HTTP \(status) from \(url): \(reason)", permanent: [401, 403, 404].contains(status))
    }
}

/// Declines HTTP authentication challenges and remembers the status that caused one.
private final class ChallengeRecorder: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: Int?

    var status: Int? { lock.withLock { recorded } }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let status = (challenge.failureResponse as? HTTPURLResponse)?.statusCode ?? 401
        lock.withLock { recorded = status }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }
}
