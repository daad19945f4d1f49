import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOWebSocket
import WSClient
import WSCore

/// Carries BLIP frames as binary WebSocket messages (one frame per message).
public struct WebSocketTransport: BLIPTransport {
    let outbound: WebSocketOutboundWriter

    public func send(_ frame: [UInt8]) async throws {
        try await outbound.write(.binary(ByteBuffer(bytes: frame)))
    }

    public func close(error: BLIPError?) async {
        let code = error.map { WebSocketErrorCode(codeNumber: Int($0.webSocketCloseCode)) } ?? .normalClosure
        try? await outbound.close(code, reason: error.map { String($0.message.prefix(120)) })
    }
}

/// A WebSocket's messages as BLIP transport events: binary messages are frames,
/// the end of the stream is a clean close, and a failure is an error close.
struct WebSocketEvents: AsyncSequence, Sendable {
    typealias Element = BLIPTransportEvent
    typealias Failure = Never
    let messages: WebSocketInboundMessageStream

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: WebSocketInboundMessageStream.AsyncIterator
        var finished = false

        mutating func next() async -> BLIPTransportEvent? {
            guard !finished else { return nil }
            do {
                switch try await base.next() {
                case .binary(let buffer): return .binary(Array(buffer.readableBytesView))
                case .text(let text): return .text(text)
                case nil:
                    finished = true
                    return .closed(nil)
                }
            } catch {
                finished = true
                return .closed(BLIPError(code: 502, message: "WebSocket failed: \(error)"))
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: messages.makeAsyncIterator()) }
}

/// Runs BLIP over WebSocket: the subprotocol, the client dial, and the glue that
/// turns an open WebSocket (client or server side) into a running `BLIPConnection`.
public enum BLIPWebSocket {
    /// The subprotocol a dialer asks for unless told otherwise (Couchbase Lite 3's).
    public static let subprotocol = ProtocolVersion.default.subprotocol
    /// Largest WebSocket frame accepted (a BLIP frame plus its header and checksum).
    public static let maxWebSocketFrame = 1 << 20
    /// How long a closing handshake may take: a partitioned peer never answers it,
    /// and shutdown must not wait long for it.
    public static let closeTimeout = Duration.seconds(2)

    /// The subprotocols a passive peer accepts, preferred first: Couchbase Mobile 4
    /// (version vectors, Couchbase Lite 4), 3 and 2 (revision trees; the same messages
    /// for the default collection, as Sync Gateway 3 and 4 accept them).
    public static let acceptedSubprotocols = ProtocolVersion.accepted.map(\.subprotocol)

    /// The subprotocol to answer for a client's `Sec-WebSocket-Protocol` offer: the highest
    /// both speak (the first of `acceptedSubprotocols` it offers, whatever its order), or
    /// nil when it offers none.
    public static func negotiate(_ offered: String?) -> String? {
        guard let offered else { return nil }
        let protocols = offered.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        return acceptedSubprotocols.first { protocols.contains($0) }
    }

    /// Auto-ping period for a heartbeat interval: a ping goes out every 1.5
    /// intervals and a peer that has not answered by the next one is gone, so a
    /// silent peer is dropped after 1.5–3 intervals.
    public static func pingPeriod(heartbeat: Duration) -> Duration {
        heartbeat * 3 / 2
    }

    /// Runs a BLIP connection over an open WebSocket (swift-websocket's streams)
    /// until it closes. `session` is called with the connection once it runs; with
    /// `closeWhenSessionEnds` the connection is closed cleanly when `session` returns
    /// (an active one-shot replication), otherwise it lives until the peer closes.
    public static func run(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, configuration: BLIPConfiguration = .init(),
        logger: Logger, closeWhenSessionEnds: Bool,
        session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        try await run(
            transport: WebSocketTransport(outbound: outbound),
            inbound: WebSocketEvents(messages: inbound.messages(maxSize: maxWebSocketFrame)),
            configuration: configuration, logger: logger, closeWhenSessionEnds: closeWhenSessionEnds,
            prepare: { connection in { try await session(connection) } })
    }

    /// Runs a BLIP connection over a link set up by `prepareServerLink` (or the
    /// client dial) until it closes; see `run(inbound:outbound:…)`.
    public static func run(
        link: WebSocketLink, configuration: BLIPConfiguration = .init(), logger: Logger, closeWhenSessionEnds: Bool,
        session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        try await run(
            transport: link, inbound: link.inbound, configuration: configuration, logger: logger,
            closeWhenSessionEnds: closeWhenSessionEnds, prepare: { connection in { try await session(connection) } })
    }

    /// Runs a BLIP connection over a link, for a passive peer: `prepare` is called
    /// with the connection *before the first frame is read* (register every request
    /// handler there: a client may send its first requests in the same TCP segment as
    /// the end of its upgrade request), and returns what runs while the connection
    /// lives.
    public static func run(
        link: WebSocketLink, configuration: BLIPConfiguration = .init(), logger: Logger, closeWhenSessionEnds: Bool,
        prepare: @escaping @Sendable (BLIPConnection) -> @Sendable () async throws -> Void
    ) async throws {
        try await run(
            transport: link, inbound: link.inbound, configuration: configuration, logger: logger,
            closeWhenSessionEnds: closeWhenSessionEnds, prepare: prepare)
    }

    /// Server side, from the HTTP server's upgrade decision (before it answers 101):
    /// hooks the channel so that once the upgrade completes, BLIP frames are read
    /// and written by Shoal's own channel handler (coalesced writes, pings every
    /// `pingPeriod(heartbeat:)`) instead of the server's WebSocket layer, which then
    /// only sees the end of the connection. The returned future gives the link once
    /// the upgrade is complete. Disable the server's own automatic pings.
    public static func prepareServerLink(channel: any Channel, heartbeat: Duration?) async throws -> EventLoopFuture<WebSocketLink> {
        let promise = channel.eventLoop.makePromise(of: WebSocketLink.self)
        let period = heartbeat.map { TimeAmount(Self.pingPeriod(heartbeat: $0)) }
        try await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.addHandler(BLIPUpgradeInstaller(pingPeriod: period, promise: promise))
        }.get()
        return promise.futureResult
    }

    static func run(
        transport: any BLIPTransport, inbound: some AsyncSequence<BLIPTransportEvent, Never> & Sendable,
        configuration: BLIPConfiguration, logger: Logger, closeWhenSessionEnds: Bool,
        prepare: @escaping @Sendable (BLIPConnection) -> @Sendable () async throws -> Void
    ) async throws {
        let connection = BLIPConnection(
            transport: transport, configuration: configuration, logger: logger,
            subprotocol: (transport as? WebSocketLink)?.subprotocol)
        // Handlers are in place before the reader starts.
        let session = prepare(connection)
        let sessionReturned = AtomicFlag()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // The reader pulls straight from the WebSocket (no hop through a buffer).
                try await connection.run(inbound: inbound)
            }
            group.addTask {
                try await session()
                sessionReturned.value = true
                if closeWhenSessionEnds { await connection.close() }
            }
            // The first failure (or the end of the connection) ends everything.
            do {
                while let _ = try await group.next() {
                    if connection.isClosed { break }
                }
            } catch {
                await connection.close(error: error as? BLIPError ?? BLIPError(code: 500, message: "\(error)"))
                group.cancelAll()
                throw error
            }
            group.cancelAll()
        }
        // The connection ended, even cleanly (a peer going away, or timing this side out
        // with close code 1001), before the session was done: the session's work is not
        // done either. Returning would tell a one-shot replication it had finished.
        if !sessionReturned.value { throw sessionCutShort }
    }

    /// What `run` throws when the connection ends before the session returned.
    public static let sessionCutShort = BLIPError(
        code: BLIPError.Code.connectionClosed, message: "connection closed before the session was done")

    /// How long a dial waits for the TCP connection (the SYN's answer) by default.
    public static let defaultConnectTimeout = Duration.seconds(10)

    /// Dials `url` (ws:// or wss://) asking for the BLIP subprotocol (`subprotocol`, or the
    /// list `headers` gives as `Sec-WebSocket-Protocol`), then runs
    /// `session` over the connection (closing it when `session` returns). `tls` says
    /// how a `wss://` server's certificate is checked; `hook` adds request headers
    /// once the connection is up and checks the server's answer. A refused upgrade
    /// throws `BLIPUpgradeRefused` with the server's status and reason. `connectTimeout`
    /// bounds the TCP connect alone (a peer behind a partition never answers the SYN).
    public static func connect(
        url: String, headers: HTTPFields = [:], tls: BLIPClientTLS = .standard, hook: (any BLIPUpgradeHook)? = nil,
        heartbeat: Duration?, connectTimeout: Duration = defaultConnectTimeout, configuration: BLIPConfiguration = .init(),
        logger: Logger, session: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        var fields = headers
        // `subprotocol` unless the caller offers its own list.
        if fields[.secWebSocketProtocol] == nil { fields[.secWebSocketProtocol] = subprotocol }
        let (channel, link) = try await BLIPWebSocketChannel.connect(
            url: url, headers: fields, tls: tls, hook: hook, heartbeat: heartbeat, connectTimeout: connectTimeout)
        do {
            try await run(link: link, configuration: configuration, logger: logger, closeWhenSessionEnds: true,
                          session: session)
        } catch {
            channel.close(promise: nil)
            throw error
        }
        // The closing handshake ends with the channel (bounded by `closeTimeout`).
        try? await channel.closeFuture.get()
    }

    /// Asks `url` the same request as a plain HTTP GET (no upgrade) and returns the
    /// status and the start of the body: the reason for a refused upgrade when the
    /// server only answered it with a bare 400. Nil when the server cannot be reached.
    public static func probe(
        url: String, headers: HTTPFields = [:], tls: BLIPClientTLS = .standard, hook: (any BLIPUpgradeHook)? = nil
    ) async -> BLIPUpgradeRefused? {
        do {
            let (channel, _) = try await BLIPWebSocketChannel.connect(
                url: url, headers: headers, tls: tls, hook: hook, heartbeat: nil, probeOnly: true)
            channel.close(promise: nil)
            return nil
        } catch {
            return error as? BLIPUpgradeRefused
        }
    }
}
