import NIOCore
import NIOHTTP1
import NIOPosix

/// A minimal HTTP/1.1 client over ONE keep-alive TCP connection (raw SwiftNIO).
/// Requests are sent one after the other (or pipelined if the caller overlaps
/// them); responses are matched in order.
public final class KeepAliveHTTPClient: Sendable {
    public struct Response: Sendable {
        public let status: HTTPResponseStatus
        public let headers: HTTPHeaders
        public let body: ByteBuffer

        public var bodyString: String { String(buffer: body) }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let channel: any Channel
    private let host: String
    private let port: Int

    private init(channel: any Channel, host: String, port: Int) {
        self.channel = channel
        self.host = host
        self.port = port
    }

    /// Opens the connection (TCP_NODELAY on, like every HTTP client).
    public static func connect(host: String, port: Int) async throws -> KeepAliveHTTPClient {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ExchangeHandler())
                }
            }
            .connect(host: host, port: port)
            .get()
        return KeepAliveHTTPClient(channel: channel, host: host, port: port)
    }

    /// Sends one request and waits for its whole response.
    public func request(
        _ method: HTTPMethod, _ path: String, body: ByteBuffer? = nil, contentType: String = "application/json",
        headers: [(String, String)] = []
    ) async throws -> Response {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        head.headers.add(name: "Host", value: "\(host):\(port)")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        head.headers.add(name: "Connection", value: "keep-alive")
        head.headers.add(name: "Accept", value: "application/json")
        if let body {
            head.headers.add(name: "Content-Type", value: contentType)
            head.headers.add(name: "Content-Length", value: String(body.readableBytes))
        }
        let promise = channel.eventLoop.makePromise(of: Response.self)
        channel.writeAndFlush(Exchange(head: head, body: body, promise: promise), promise: nil)
        return try await promise.futureResult.get()
    }

    public func post(_ path: String, json: ByteBuffer) async throws -> Response {
        try await request(.POST, path, body: json)
    }

    public func close() async {
        try? await channel.close()
    }

    /// One request and the promise of its response.
    struct Exchange: Sendable {
        let head: HTTPRequestHead
        let body: ByteBuffer?
        let promise: EventLoopPromise<Response>
    }

    /// Writes requests and completes their promises with the responses, in order.
    final class ExchangeHandler: ChannelDuplexHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundIn = Exchange
        typealias OutboundOut = HTTPClientRequestPart

        private var pending: CircularBuffer<EventLoopPromise<Response>> = []
        private var head: HTTPResponseHead?
        private var body: ByteBuffer?

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let exchange = unwrapOutboundIn(data)
            pending.append(exchange.promise)
            context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
            if let body = exchange.body {
                context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            }
            context.write(wrapOutboundOut(.end(nil)), promise: promise)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let responseHead):
                head = responseHead
                body = nil
            case .body(var chunk):
                if body == nil {
                    body = chunk
                } else {
                    body!.writeBuffer(&chunk)
                }
            case .end:
                guard let responseHead = head, let promise = pending.popFirst() else {
                    context.fireErrorCaught(Failure(description: "unexpected HTTP response"))
                    return
                }
                promise.succeed(Response(status: responseHead.status, headers: responseHead.headers,
                                         body: body ?? ByteBuffer()))
                head = nil
                body = nil
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            failAll(error)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            failAll(Failure(description: "connection closed"))
            context.fireChannelInactive()
        }

        private func failAll(_ error: any Error) {
            while let promise = pending.popFirst() {
                promise.fail(error)
            }
        }
    }
}
