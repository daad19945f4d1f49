import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import WSClient

/// Sets up NIO channels that carry BLIP through a `BLIPWebSocketHandler`: the client
/// dial of a `ws://` or `wss://` URL (TCP, TLS, HTTP upgrade, subprotocol), and on the server side the
/// hook that puts the handler in place of the HTTP server's WebSocket layer.
enum BLIPWebSocketChannel {
    enum UpgradeResult: Sendable {
        case upgraded(WebSocketLink)
        case refused
    }

    /// Dials `url` (`ws://` or `wss://`, verified as `tls` says), completes the
    /// WebSocket upgrade with `headers` plus the hook's, and lets the hook check the
    /// answer. Throws `BLIPUpgradeRefused` when the server answers with an HTTP status.
    /// With `probeOnly` it sends the same request as a plain GET (no upgrade) and always
    /// throws the answer as `BLIPUpgradeRefused`: how a client learns why an upgrade was
    /// refused from servers that answer refused upgrades with a bare 400.
    static func connect(
        url: String, headers: HTTPFields, tls: BLIPClientTLS, hook: (any BLIPUpgradeHook)?, heartbeat: Duration?,
        probeOnly: Bool = false, connectTimeout: Duration = BLIPWebSocket.defaultConnectTimeout
    ) async throws -> (any Channel, WebSocketLink) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "ws" || scheme == "wss", let host = components.host, !host.isEmpty
        else { throw WebSocketClientError.invalidURL }
        let secure = scheme == "wss"
        let port = components.port ?? (secure ? 443 : 80)
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        let uri = path
        var requestHeaders = HTTPHeaders()
        requestHeaders.add(name: "Host", value: components.port.map { "\(host):\($0)" } ?? host)
        requestHeaders.add(name: "Content-Length", value: "0")
        for field in headers {
            requestHeaders.add(name: field.name.rawName, value: field.value)
        }
        let baseHeaders = requestHeaders
        let pingPeriod = heartbeat.map { TimeAmount(BLIPWebSocket.pingPeriod(heartbeat: $0)) }
        let sslContext = secure ? try tls.sslContext() : nil
        // SNI takes names only, never addresses.
        let serverName = host.contains(where: { $0.isLetter }) && !host.contains(":") ? host : nil

        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(TimeAmount(connectTimeout))
        let channelAndResult: (any Channel, Pending) = try await bootstrap.connect(host: host, port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                let upgraded = channel.eventLoop.makePromise(of: UpgradeResult.self)
                let refusal = channel.eventLoop.makePromise(of: BLIPUpgradeRefused.self)
                // Whatever happens, both are complete once the channel is gone (a second
                // completion is ignored).
                channel.closeFuture.whenComplete { _ in
                    upgraded.fail(ChannelError.ioOnClosedChannel)
                    refusal.fail(ChannelError.ioOnClosedChannel)
                }
                /// Builds the upgrade request (now that the server's certificate is known) and starts it.
                func startUpgrade(peerDER: [UInt8]?) throws {
                    let digest = peerDER.map(BLIPClientTLS.digest(ofCertificateDER:))
                    var fields = baseHeaders
                    for (name, value) in hook?.requestHeaders(peerCertificateDigest: digest) ?? [] {
                        fields.replaceOrAdd(name: name, value: value)
                    }
                    let collector = UpgradeRefusalCollector(promise: refusal)
                    if probeOnly {
                        fields.remove(name: "Sec-WebSocket-Protocol")
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(collector)
                        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: fields)
                        channel.write(HTTPClientRequestPart.head(head), promise: nil)
                        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
                        upgraded.succeed(.refused)
                        return
                    }
                    let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: fields)
                    let upgrader = NIOTypedWebSocketClientUpgrader<UpgradeResult>(
                        maxFrameSize: BLIPWebSocket.maxWebSocketFrame, enableAutomaticErrorHandling: false
                    ) { channel, response in
                        channel.eventLoop.makeCompletedFuture {
                            let collector = try channel.pipeline.syncOperations.handler(type: UpgradeRefusalCollector.self)
                            _ = channel.pipeline.syncOperations.removeHandler(collector)
                            try hook?.checkResponse(
                                headers: response.headers.map { ($0.name, $0.value) }, peerCertificateDigest: digest)
                            let subprotocol = response.headers.first(name: "Sec-WebSocket-Protocol")
                            return .upgraded(try install(
                                on: channel, isClient: true, pingPeriod: pingPeriod, subprotocol: subprotocol))
                        }
                    }
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration<UpgradeResult>(
                        upgradeRequestHead: head, upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(.refused) })
                    // Bytes that arrive with the 101 (a server that writes at once, as a
                    // Shoal acceptor does) go on to the WebSocket decoder: NIO's default
                    // drops them with the HTTP decoder, and BLIP then fails the next
                    // frame's checksum (`checksum mismatch in RPY frame #1`).
                    var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                    pipeline.leftOverBytesStrategy = .forwardBytes
                    let result = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: pipeline)
                    try channel.pipeline.syncOperations.addHandler(collector)
                    result.cascade(to: upgraded)
                }
                if let sslContext {
                    let ssl = try NIOSSLClientHandler(context: sslContext, serverHostname: serverName)
                    try channel.pipeline.syncOperations.addHandler(ssl)
                    try channel.pipeline.syncOperations.addHandler(TLSHandshakeWaiter { result, context in
                        do {
                            let der = try result.get()
                            try tls.accept(peerDER: der)
                            try startUpgrade(peerDER: der)
                        } catch {
                            let failure = error as? BLIPError
                                ?? BLIPError(code: 525, message: "TLS handshake with \(host):\(port) failed: \(error)")
                            upgraded.fail(failure)
                            refusal.fail(failure)
                            context.close(promise: nil)
                        }
                    })
                } else {
                    try startUpgrade(peerDER: nil)
                }
                return (channel, Pending(upgraded: upgraded.futureResult, refusal: refusal.futureResult))
            }
        }
        let (channel, pending) = channelAndResult
        let outcome: UpgradeResult
        do {
            outcome = try await pending.upgraded.get()
        } catch {
            channel.close(promise: nil)
            throw error
        }
        switch outcome {
        case .upgraded(let link):
            return (channel, link)
        case .refused:
            // The response follows the decision: wait for it (bounded), then close.
            channel.eventLoop.scheduleTask(in: .seconds(5)) { channel.close(promise: nil) }
            let refusal = try? await pending.refusal.get()
            channel.close(promise: nil)
            throw refusal ?? BLIPUpgradeRefused(status: 0, body: "the server refused the WebSocket upgrade")
        }
    }

    /// The two outcomes of a dial still to come: the upgrade, and the refusal's response.
    struct Pending: Sendable {
        let upgraded: EventLoopFuture<UpgradeResult>
        let refusal: EventLoopFuture<BLIPUpgradeRefused>
    }

    /// Adds the BLIP handler behind the WebSocket frame decoder (event loop only).
    static func install(
        on channel: any Channel, isClient: Bool, pingPeriod: TimeAmount?, subprotocol: String? = nil
    ) throws -> WebSocketLink {
        let link = WebSocketLink(eventLoop: channel.eventLoop, subprotocol: subprotocol)
        let operations = channel.pipeline.syncOperations
        // A client's frames are masked; they go out in front of NIO's encoder, which
        // masks a byte at a time (`MaskedFrameWriter`).
        var maskedWriter: MaskedFrameWriter?
        if isClient {
            let writer = MaskedFrameWriter()
            try operations.addHandler(writer, position: .before(try operations.handler(type: WebSocketFrameEncoder.self)))
            maskedWriter = writer
        }
        let handler = BLIPWebSocketHandler(
            link: link, pingPeriod: pingPeriod,
            closeTimeout: TimeAmount(BLIPWebSocket.closeTimeout), maxMessageSize: BLIPWebSocket.maxWebSocketFrame,
            maskedWriter: maskedWriter)
        let decoder = try operations.handler(type: ByteToMessageHandler<WebSocketFrameDecoder>.self)
        try operations.addHandler(handler, position: .after(decoder))
        return link
    }
}
