import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import WSClient

/// Sets up NIO channels that carry BLIP through a `BLIPWebSocketHandler`: the client
/// dial of a `ws://` URL (TCP, HTTP upgrade, subprotocol), and on the server side the
/// hook that puts the handler in place of the HTTP server's WebSocket layer.
enum BLIPWebSocketChannel {
    enum UpgradeResult: Sendable {
        case upgraded(WebSocketLink)
        case refused
    }

    /// Dials `url` (`ws://` only) and completes the WebSocket upgrade. Throws
    /// `WebSocketClientError.webSocketUpgradeFailed` when the server refuses it.
    static func connect(
        url: String, headers: HTTPFields, heartbeat: Duration?
    ) async throws -> (any Channel, WebSocketLink) {
        guard let components = URLComponents(string: url), components.scheme == "ws", let host = components.host,
              !host.isEmpty
        else { throw WebSocketClientError.invalidURL }
        let port = components.port ?? 80
        var uri = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { uri += "?" + query }
        var requestHeaders = HTTPHeaders()
        requestHeaders.add(name: "Host", value: components.port.map { "\(host):\($0)" } ?? host)
        requestHeaders.add(name: "Content-Length", value: "0")
        for field in headers {
            requestHeaders.add(name: field.name.rawName, value: field.value)
        }
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: requestHeaders)
        let pingPeriod = heartbeat.map { TimeAmount(BLIPWebSocket.pingPeriod(heartbeat: $0)) }

        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
        let channelAndResult: (any Channel, EventLoopFuture<UpgradeResult>) = try await bootstrap.connect(
            host: host, port: port
        ) { channel in
            channel.eventLoop.makeCompletedFuture {
                let upgrader = NIOTypedWebSocketClientUpgrader<UpgradeResult>(
                    maxFrameSize: BLIPWebSocket.maxWebSocketFrame, enableAutomaticErrorHandling: false
                ) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        .upgraded(try install(on: channel, isClient: true, pingPeriod: pingPeriod))
                    }
                }
                let configuration = NIOTypedHTTPClientUpgradeConfiguration<UpgradeResult>(
                    upgradeRequestHead: head, upgraders: [upgrader],
                    notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(.refused) })
                let result = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                    configuration: .init(upgradeConfiguration: configuration))
                return (channel, result)
            }
        }
        let (channel, result) = channelAndResult
        let outcome: UpgradeResult
        do {
            outcome = try await result.get()
        } catch {
            channel.close(promise: nil)
            throw error
        }
        switch outcome {
        case .upgraded(let link):
            return (channel, link)
        case .refused:
            channel.close(promise: nil)
            throw WebSocketClientError.webSocketUpgradeFailed
        }
    }

    /// Adds the BLIP handler behind the WebSocket frame decoder (event loop only).
    static func install(on channel: any Channel, isClient: Bool, pingPeriod: TimeAmount?) throws -> WebSocketLink {
        let link = WebSocketLink(eventLoop: channel.eventLoop)
        let handler = BLIPWebSocketHandler(
            link: link, isClient: isClient, pingPeriod: pingPeriod,
            closeTimeout: TimeAmount(BLIPWebSocket.closeTimeout), maxMessageSize: BLIPWebSocket.maxWebSocketFrame)
        let operations = channel.pipeline.syncOperations
        let decoder = try operations.handler(type: ByteToMessageHandler<WebSocketFrameDecoder>.self)
        try operations.addHandler(handler, position: .after(decoder))
        return link
    }
}
