import BLIP
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle

/// Accepts BLIP replication connections for a database (ShoalNode implements it
/// with the Replication module).
public protocol SyncAcceptor: Sendable {
    /// The session to run over a new connection to `database`; throws the refusal the
    /// client gets instead (404 no such database, 401 no or bad credentials, 403 a
    /// disabled user, …). `headers` are the upgrade request's: credentials
    /// (`Authorization`, `Cookie`), and for a mesh peer its `X-Shoal-Node-ID` and proof
    /// of the mesh secret. `tlsBinding` is the SHA-256 of the certificate this
    /// connection's TLS presented (nil for a plain connection). `subprotocol` is the one
    /// negotiated (`BLIP_3+CBMobile_4` names documents by versions).
    func syncSession(
        database: String, isAdmin: Bool, headers: HTTPFields, tlsBinding: [UInt8]?, subprotocol: String
    ) async throws(SyncRefusal) -> SyncAcceptance
}

/// An accepted BLIP connection: how to serve it, and headers for the 101 answer
/// (a mesh node's ID and its answer to the dialer's proof).
public struct SyncAcceptance: Sendable {
    /// Called with the connection before its first frame is read (a client may send
    /// requests in the same TCP segment as the end of its upgrade): registers the
    /// request handlers, and returns what runs while the connection lives.
    public let start: @Sendable (BLIPConnection) -> @Sendable () async throws -> Void
    public let responseHeaders: HTTPFields

    public init(
        responseHeaders: HTTPFields = [:],
        start: @escaping @Sendable (BLIPConnection) -> @Sendable () async throws -> Void
    ) {
        self.start = start
        self.responseHeaders = responseHeaders
    }
}

/// Builds one HTTP listener: the REST handler plus the WebSocket upgrade of
/// `/{db}/_blipsync` (subprotocols `BLIP_3+CBMobile_4`, `_3`, `_2`) on the same port, with TLS
/// when `tls` is given (see `ListenerTLS` for required and optional TLS).
public enum RESTListener {
    public static func makeApplication(
        handler: RESTHandler, host: String, port: Int, sync: (any SyncAcceptor)?, heartbeat: Duration,
        tls: ListenerTLS? = nil, onRunning: @escaping @Sendable (Int) -> Void, logger: Logger
    ) -> some Service {
        // Pings and BLIP frames are handled by BLIP's own channel handler (see
        // `BLIPWebSocket.prepareServerLink`); the server's WebSocket layer only sees the end.
        let webSocket = WebSocketServerConfiguration(
            maxFrameSize: BLIPWebSocket.maxWebSocketFrame, autoPing: .disabled, closeTimeout: BLIPWebSocket.closeTimeout)
        let isAdmin = handler.isAdmin
        let serverName = "Shoal/\(handler.configuration.version)"
        let syncLogger = Logger(label: "Sync")
        let shouldUpgrade: @Sendable (HTTPRequest, any Channel, Logger) async throws -> ShouldUpgradeResult<
            WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
        > = { request, channel, _ in
            guard let sync, let database = syncDatabase(request.path) else { return .dontUpgrade }
            let offered = request.headerFields[.secWebSocketProtocol]
            guard let subprotocol = BLIPWebSocket.negotiate(offered) else {
                let failure = HTTPFailure.needsBLIPUpgrade
                syncLogger.notice(
                    "BLIP connection to \(database) refused: 400, no subprotocol Shoal speaks among \(offered.map { "'\($0)'" } ?? "none") (it speaks \(BLIPWebSocket.acceptedSubprotocols.joined(separator: ", ")))")
                try await UpgradeRefusalWriter.refuse(channel: channel, failure: failure, serverName: serverName)
                return .dontUpgrade
            }
            // Over TLS the binding is this listener's certificate.
            var secure = false
            if tls != nil {
                secure = (try? await channel.pipeline.containsHandler(type: NIOSSLServerHandler.self).get()) != nil
            }
            let accepted: SyncAcceptance
            do throws(SyncRefusal) {
                accepted = try await sync.syncSession(
                    database: database, isAdmin: isAdmin, headers: request.headerFields,
                    tlsBinding: secure ? tls?.certificateDigest : nil, subprotocol: subprotocol)
            } catch {
                // Answered here: Hummingbird would answer a declined upgrade with a bare 400.
                syncLogger.notice("BLIP connection to \(database) (\(subprotocol)) refused: \(error.status) \(error.reason)")
                try await UpgradeRefusalWriter.refuse(channel: channel, failure: HTTPFailure(error), serverName: serverName)
                return .dontUpgrade
            }
            syncLogger.debug("BLIP connection to \(database) (\(subprotocol)\(secure ? ", TLS" : ""))")
            let link = try await BLIPWebSocket.prepareServerLink(channel: channel, heartbeat: heartbeat)
            var answer = accepted.responseHeaders
            answer[.secWebSocketProtocol] = subprotocol
            return .upgrade(answer) { _, _, _ in
                do {
                    try await BLIPWebSocket.run(
                        link: try await link.get(), logger: syncLogger, closeWhenSessionEnds: false, prepare: accepted.start)
                } catch {
                    syncLogger.debug("BLIP connection to \(database) ended: \(error)")
                }
            }
        }
        // Slowloris clients: the first request head must arrive within the idle timeout,
        // and a kept-alive connection may sit idle between requests that long.
        let idle = handler.configuration.idleTimeout.map { TimeAmount($0) }
        let channelConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(http1: .init(idleTimeout: idle), ws: webSocket)
        let server = HTTPServerBuilder { responder in
            FrontHandlersChannel(
                base: HTTP1WebSocketUpgradeChannel(
                    responder: responder, configuration: channelConfiguration, shouldUpgrade: shouldUpgrade),
                handlers: {
                    // The sniffer puts the TLS handler right after itself, so the deadline
                    // sees the decrypted request.
                    var handlers: [any ChannelHandler] = tls.map { [TLSSniffer(tls: $0)] } ?? []
                    if let idle { handlers.append(RequestHeadDeadline(limit: idle)) }
                    return handlers
                })
        }
        return Application(
            responder: handler.responder,
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in onRunning(channel.localAddress?.port ?? port) },
            logger: logger)
    }

    /// `/{db}/_blipsync` → `db` (percent-decoded); nil for any other path.
    static func syncDatabase(_ path: String?) -> String? {
        guard let path else { return nil }
        let pathOnly = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        let segments = pathOnly.split(separator: "/").compactMap { PercentDecoding.decode($0) }
        guard segments.count == 2, segments[1] == "_blipsync" else { return nil }
        return segments[0]
    }
}
