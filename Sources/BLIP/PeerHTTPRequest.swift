import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One HTTP/1.1 request over SwiftNIO, on a connection of its own (`Connection: close`):
/// the few plain requests a node or its command line sends besides BLIP (a static peer's
/// `GET /`, `shoal replicate`'s calls to the admin port).
///
/// It exists so that a node never loads Foundation's URLSession, whose libcurl and TLS
/// libraries cost every node process about 6 MB of resident memory. `https` checks the
/// server's certificate against the system's trust roots (`BLIPClientTLS.standard`).
public struct PeerHTTPRequest: Sendable {
    /// `GET`, `PUT`, `POST`, `DELETE`, …
    public var method: String
    public var url: URL
    public var headers: [(String, String)]
    public var body: [UInt8]?
    /// The whole exchange (connect, TLS, request, response) must end within it.
    public var timeout: Duration
    /// Responses larger than this fail the request.
    public var maxResponseBytes = 16 << 20

    public init(method: String = "GET", url: URL, headers: [(String, String)] = [], body: [UInt8]? = nil, timeout: Duration = .seconds(30)) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// The server's answer.
    public struct Response: Sendable {
        public let status: Int
        public let headers: [(String, String)]
        public let body: [UInt8]
    }

    /// Sends the request and waits for the whole response.
    public func send() async throws -> Response {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
            throw BLIPError(code: 400, message: "not an http(s) URL: \(url)")
        }
        let secure = scheme == "https"
        let port = url.port ?? (secure ? 443 : 80)
        let sslContext = secure ? try BLIPClientTLS.standard.sslContext() : nil
        let serverName = host.contains(where: { $0.isLetter }) && !host.contains(":") ? host : nil
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?" + query }
        var fields = HTTPHeaders(headers)
        if !fields.contains(name: "Host") { fields.add(name: "Host", value: url.port.map { "\(host):\($0)" } ?? host) }
        fields.replaceOrAdd(name: "Connection", value: "close")
        if let body { fields.replaceOrAdd(name: "Content-Length", value: String(body.count)) }
        let head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: path, headers: fields)
        let (body, limit) = (self.body, maxResponseBytes)

        let timeout = TimeAmount(self.timeout)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(min(timeout, .seconds(10)))
            .connect(host: host, port: port).get()
        let response = channel.eventLoop.makePromise(of: Response.self)
        let deadline = channel.eventLoop.scheduleTask(in: timeout) {
            response.fail(BLIPError(code: 504, message: "no answer from \(host):\(port) within \(self.timeout)"))
            channel.close(promise: nil)
        }
        channel.closeFuture.whenComplete { _ in
            response.fail(BLIPError(code: 502, message: "\(host):\(port) closed the connection before answering"))
        }
        do {
            try await channel.eventLoop.submit {
                let pipeline = channel.pipeline.syncOperations
                if let sslContext { try pipeline.addHandler(try NIOSSLClientHandler(context: sslContext, serverHostname: serverName)) }
                try pipeline.addHTTPClientHandlers()
                try pipeline.addHandler(ResponseCollector(promise: response, limit: limit))
                channel.write(HTTPClientRequestPart.head(head), promise: nil)
                if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil) }
                channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            }.get()
            let result = try await response.futureResult.get()
            deadline.cancel()
            channel.close(promise: nil)
            return result
        } catch {
            deadline.cancel()
            channel.close(promise: nil)
            throw error
        }
    }
}

/// Gathers one response's parts and completes the request's promise at its end.
private final class ResponseCollector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<PeerHTTPRequest.Response>
    private let limit: Int
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []

    init(promise: EventLoopPromise<PeerHTTPRequest.Response>, limit: Int) {
        self.promise = promise
        self.limit = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body(var buffer):
            guard body.count + buffer.readableBytes <= limit else {
                promise.fail(BLIPError(code: 413, message: "the response is larger than \(limit) bytes"))
                context.close(promise: nil)
                return
            }
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            promise.succeed(.init(status: Int(head.status.code), headers: head.headers.map { ($0.name, $0.value) }, body: body))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }
}
