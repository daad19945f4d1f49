import BLIP
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

/// Accepts BLIP replication connections for a database (ShoalNode implements it
/// with the Replication module).
public protocol SyncAcceptor: Sendable {
    /// The session to run over a new connection to `database`, or nil to refuse the
    /// upgrade (no such database, or the client is not allowed in: the request then gets
    /// the REST answer for `/{db}/_blipsync`, e.g. 401). `headers` are the upgrade
    /// request's: credentials (`Authorization`, `Cookie`), and for a mesh peer its
    /// `X-Shoal-Node-ID` and proof of the mesh secret.
    func syncSession(database: String, isAdmin: Bool, headers: HTTPFields) async -> (@Sendable (BLIPConnection) async throws -> Void)?
}

/// Builds one HTTP listener: the REST handler plus the WebSocket upgrade of
/// `/{db}/_blipsync` (subprotocol `BLIP_3+CBMobile_3`) on the same port.
public enum RESTListener {
    public static func makeApplication(
        handler: RESTHandler, host: String, port: Int, sync: (any SyncAcceptor)?, heartbeat: Duration,
        onRunning: @escaping @Sendable (Int) -> Void, logger: Logger
    ) -> some Service {
        // Pings and BLIP frames are handled by BLIP's own channel handler (see
        // `BLIPWebSocket.prepareServerLink`); the server's WebSocket layer only sees the end.
        let webSocket = WebSocketServerConfiguration(
            maxFrameSize: BLIPWebSocket.maxWebSocketFrame, autoPing: .disabled, closeTimeout: BLIPWebSocket.closeTimeout)
        let isAdmin = handler.isAdmin
        let syncLogger = Logger(label: "Sync")
        return Application(
            responder: handler.responder,
            server: .http1WebSocketUpgrade(configuration: .init(ws: webSocket)) { request, channel, _ in
                guard let sync, let database = syncDatabase(request.path),
                      let subprotocol = BLIPWebSocket.negotiate(request.headerFields[.secWebSocketProtocol]),
                      let session = await sync.syncSession(database: database, isAdmin: isAdmin, headers: request.headerFields)
                else { return .dontUpgrade }
                syncLogger.debug("BLIP connection to \(database) (\(subprotocol))")
                let link = try await BLIPWebSocket.prepareServerLink(channel: channel, heartbeat: heartbeat)
                return .upgrade([.secWebSocketProtocol: subprotocol]) { _, _, _ in
                    do {
                        try await BLIPWebSocket.run(
                            link: try await link.get(), logger: syncLogger, closeWhenSessionEnds: false, session: session)
                    } catch {
                        syncLogger.debug("BLIP connection to \(database) ended: \(error)")
                    }
                }
            },
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
