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
    /// The session to run over a new connection to `database`, or nil to refuse the
    /// upgrade (no such database, or the client is not allowed in: the request then gets
    /// the REST answer for `/{db}/_blipsync`, e.g. 401). `headers` are the upgrade
    /// request's: credentials (`Authorization`, `Cookie`), and for a mesh peer its
    /// `X-Shoal-Node-ID` and proof of the mesh secret. `tlsBinding` is the SHA-256 of
    /// the certificate this connection's TLS presented (nil for a plain connection).
    func syncSession(database: String, isAdmin: Bool, headers: HTTPFields, tlsBinding: [UInt8]?) async -> SyncAcceptance?
}

/// An accepted BLIP connection: the session to run, and headers for the 101 answer
/// (a mesh node's ID and its answer to the dialer's proof).
public struct SyncAcceptance: Sendable {
    public let session: @Sendable (BLIPConnection) async throws -> Void
    public let responseHeaders: HTTPFields

    public init(responseHeaders: HTTPFields = [:], session: @escaping @Sendable (BLIPConnection) async throws -> Void) {
        self.session = session
        self.responseHeaders = responseHeaders
    }
}

/// Builds one HTTP listener: the REST handler plus the WebSocket upgrade of
/// `/{db}/_blipsync` (subprotocol `BLIP_3+CBMobile_3`) on the same port, with TLS
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
        let syncLogger = Logger(label: "Sync")
        let shouldUpgrade: @Sendable (HTTPRequest, any Channel, Logger) async throws -> ShouldUpgradeResult<
            WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
        > = { request, channel, _ in
            guard let sync, let database = syncDatabase(request.path),
                  let subprotocol = BLIPWebSocket.negotiate(request.headerFields[.secWebSocketProtocol])
            else { return .dontUpgrade }
            // Over TLS the binding is this listener's certificate.
            var secure = false
            if tls != nil {
                secure = (try? await channel.pipeline.containsHandler(type: NIOSSLServerHandler.self).get()) != nil
            }
            guard let accepted = await sync.syncSession(
                database: database, isAdmin: isAdmin, headers: request.headerFields,
                tlsBinding: secure ? tls?.certificateDigest : nil)
            else { return .dontUpgrade }
            syncLogger.debug("BLIP connection to \(database) (\(subprotocol)\(secure ? ", TLS" : ""))")
            let link = try await BLIPWebSocket.prepareServerLink(channel: channel, heartbeat: heartbeat)
            var answer = accepted.responseHeaders
            answer[.secWebSocketProtocol] = subprotocol
            return .upgrade(answer) { _, _, _ in
                do {
                    try await BLIPWebSocket.run(
                        link: try await link.get(), logger: syncLogger, closeWhenSessionEnds: false, session: accepted.session)
                } catch {
                    syncLogger.debug("BLIP connection to \(database) ended: \(error)")
                }
            }
        }
        let server: HTTPServerBuilder
        if let tls {
            server = HTTPServerBuilder { responder in
                TLSSniffingChannel(
                    base: HTTP1WebSocketUpgradeChannel(
                        responder: responder, configuration: .init(ws: webSocket), shouldUpgrade: shouldUpgrade),
                    tls: tls)
            }
        } else {
            server = .http1WebSocketUpgrade(configuration: .init(ws: webSocket), shouldUpgrade: shouldUpgrade)
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
        let segments = pathOnly.split(separator: "/").compactMap { $0.removingPercentEncoding }
        guard segments.count == 2, segments[1] == "_blipsync" else { return nil }
        return segments[0]
    }
}
