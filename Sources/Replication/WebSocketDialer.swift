import BLIP
import Foundation
import HTTPTypes
import Logging

/// Dials a peer's `/{db}/_blipsync` over WebSocket (`ws://` or `wss://`, with HTTP
/// Basic credentials when given). When the upgrade is refused, the server's status
/// and reason (e.g. 401) become the error.
public struct WebSocketDialer: BLIPDialer {
    /// How to dial one URL: where (a mesh may move `ws://` to `wss://`), how to check
    /// the server's certificate, and the upgrade hook (e.g. the mesh's proofs).
    public struct Plan: Sendable {
        public var url: String
        public var tls: BLIPClientTLS
        public var hook: (any BLIPUpgradeHook)?
        /// How long the TCP connect may take (on a LAN an unanswered SYN means the peer
        /// is unreachable now; the replicator's backoff decides when to try again).
        public var connectTimeout: Duration
        /// How long an attempt may go without its session starting before another one
        /// starts beside it (nil: a quarter of the dial's deadline; see `DialAttempt`).
        public var hedgeAfter: Duration?

        public init(
            url: String, tls: BLIPClientTLS = .standard, hook: (any BLIPUpgradeHook)? = nil,
            connectTimeout: Duration = BLIPWebSocket.defaultConnectTimeout, hedgeAfter: Duration? = nil
        ) {
            self.url = url
            self.tls = tls
            self.hook = hook
            self.connectTimeout = connectTimeout
            self.hedgeAfter = hedgeAfter
        }
    }

    let configuration: BLIPConfiguration
    let logger: Logger
    /// Sent with every upgrade request (e.g. this node's ID for the mesh).
    let extraHeaders: HTTPFields
    /// The plan for each dial, given the URL (nil: the URL as is, standard TLS, no hook).
    let plan: (@Sendable (String) -> Plan)?

    public init(
        configuration: BLIPConfiguration = .init(), extraHeaders: HTTPFields = WebSocketDialer.replicatorHeaders,
        plan: (@Sendable (String) -> Plan)? = nil, logger: Logger = Logger(label: "Sync")
    ) {
        self.configuration = configuration
        self.extraHeaders = extraHeaders
        self.plan = plan
        self.logger = logger
    }

    /// The header a mesh node sends its node ID in (and answers with its own).
    public static let nodeIDHeader = HTTPField.Name("X-Shoal-Node-ID")!
    /// The header Shoal's own replicator sends on a dial that is not a mesh link (a
    /// named replication): it handles revision trees and conflicts itself, so the
    /// passive node keeps accepting its branches instead of treating it as a Couchbase
    /// Lite client in no-conflicts mode (`PeerDialect.refusesBranches`).
    public static let replicatorHeader = HTTPField.Name("X-Shoal-Replicator")!
    /// The default extra headers: `X-Shoal-Replicator: 1`.
    public static let replicatorHeaders: HTTPFields = [replicatorHeader: "1"]

    public func dial(
        url: String, username: String?, password: String?, heartbeat: Duration, pinnedCertificate: String?,
        session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        try await dial(
            url: url, username: username, password: password, heartbeat: heartbeat, pinnedCertificate: pinnedCertificate,
            subprotocols: nil, session: session)
    }

    public func dial(
        url: String, username: String?, password: String?, heartbeat: Duration, pinnedCertificate: String?,
        subprotocols: [String]?, session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        var plan = self.plan?(url) ?? Plan(url: url)
        if let pinnedCertificate {
            do {
                plan.tls = .pinned(try BLIPClientTLS.certificateDER(pemOrPath: pinnedCertificate))
            } catch {
                throw DialError("pinned_cert: \(error)", permanent: true)
            }
        }
        var headers = extraHeaders
        if let authorization = Self.basicAuthorization(username: username, password: password) {
            headers[.authorization] = authorization
        }
        if let subprotocols, !subprotocols.isEmpty {
            headers[.secWebSocketProtocol] = subprotocols.joined(separator: ",")
        }
        // A peer behind a partition may accept nothing and answer nothing: give up on
        // the connect + upgrade after a while (the session itself has heartbeats). An
        // attempt that hangs gets company after a quarter of that: sent into a fault
        // that healed since, it would otherwise hold the link down until the deadline
        // (seen in the lab: links back 6 s after the heal instead of 1).
        let fields = headers
        let attempt = DialAttempt()
        let dialTimeout = max(Duration.seconds(5), heartbeat * 3)
        try await attempt.run(
            deadline: dialTimeout, hedgeAfter: plan.hedgeAfter ?? dialTimeout / 4,
            timeoutError: DialError("no answer from \(plan.url) within \(dialTimeout)", permanent: false)
        ) { [configuration, logger, plan] index in
            do {
                try await BLIPWebSocket.connect(
                    url: plan.url, headers: fields, tls: plan.tls, hook: plan.hook, heartbeat: heartbeat,
                    connectTimeout: plan.connectTimeout, configuration: configuration, logger: logger
                ) { connection in
                    // An abandoned attempt, or one another attempt beat, closes at once.
                    guard attempt.start(index) else { return }
                    try await session(connection)
                }
            } catch var refusal as BLIPUpgradeRefused {
                if refusal.status == 400 && refusal.body.isEmpty {
                    // Older Shoal nodes (plain Hummingbird) answer every refused upgrade with a bare 400: ask
                    // the same request without the upgrade to get the real status and reason.
                    refusal = await BLIPWebSocket.probe(url: plan.url, headers: fields, tls: plan.tls, hook: plan.hook) ?? refusal
                }
                throw Self.explain(refusal, url: plan.url)
            }
        }
    }

    static func basicAuthorization(username: String?, password: String?) -> String? {
        guard let username, !username.isEmpty else { return nil }
        return "Basic " + Data("\(username):\(password ?? "")".utf8).base64EncodedString()
    }

    /// The error for a refused upgrade: the server's status and reason (e.g. 401 for bad
    /// credentials or a missing mesh secret, 404 for an unknown database); bad
    /// credentials and unknown databases are permanent.
    static func explain(_ refusal: BLIPUpgradeRefused, url: String) -> DialError {
        let reason = refusal.body.trimmingCharacters(in: .whitespacesAndNewlines).prefix(300)
        guard refusal.status > 0 else { return DialError("WebSocket upgrade to \(url) failed", permanent: false) }
        return DialError("HTTP \(refusal.status) from \(url): \(reason)", permanent: [401, 403, 404].contains(refusal.status))
    }
}
