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

    public init(configuration: BLIPConfiguration = .init(), extraHeaders: HTTPFields = [:], logger: Logger = Logger(label: "Sync")) {
        self.configuration = configuration
        self.extraHeaders = extraHeaders
        self.logger = logger
    }

    /// The header a mesh node sends its node ID in.
    public static let nodeIDHeader = HTTPField.Name("X-Shoal-Node-ID")!

    public func dial(
        url: String, username: String?, password: String?, heartbeat: Duration,
        session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        var headers = extraHeaders
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
                throw await Self.explainRefusal(url: url, authorization: fields[.authorization])
            }
        }
    }

    static func basicAuthorization(username: String?, password: String?) -> String? {
        guard let username, !username.isEmpty else { return nil }
        return "Basic " + Data("\(username):\(password ?? "")".utf8).base64EncodedString()
    }

    /// Probes the endpoint over HTTP to learn why the upgrade was refused.
    static func explainRefusal(url: String, authorization: String?) async -> DialError {
        guard let httpURL = ReplicationConfiguration.httpURL(forRemote: url) else {
            return DialError("invalid URL \(url)", permanent: true)
        }
        var request = URLRequest(url: httpURL, timeoutInterval: 10)
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        guard let (data, response) = try? await URLSession.shared.data(for: request),
              let status = (response as? HTTPURLResponse)?.statusCode
        else { return DialError("WebSocket upgrade to \(url) failed", permanent: false) }
        let reason = String(decoding: data.prefix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return DialError("HTTP \(status) from \(url): \(reason)", permanent: [401, 403, 404].contains(status))
    }
}
