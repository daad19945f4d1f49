import DocumentModel
import HTTPTypes
import NIOCore
import NIOSSL

/// Answers a refused WebSocket upgrade with a real HTTP error (status, JSON body,
/// `WWW-Authenticate` on 401) instead of the bare `400 Bad Request` that Hummingbird
/// writes for every upgrade its `shouldUpgrade` declines.
///
/// Added at the front of the pipeline (next to the socket, or right behind TLS) while
/// the upgrade is being decided: it writes the answer when added, then swallows every later write, so
/// Hummingbird's own 400 never reaches the client; Hummingbird then closes the
/// connection as usual.
final class UpgradeRefusalWriter: ChannelOutboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Touched only on the channel's event loop (`handlerAdded`).
    private let answer: [UInt8]
    private let written: EventLoopPromise<Void>

    private init(answer: [UInt8], written: EventLoopPromise<Void>) {
        self.answer = answer
        self.written = written
    }

    /// Writes `failure` as the upgrade's answer (with `Connection: close`) and
    /// returns once it is flushed.
    static func refuse(channel: any Channel, failure: HTTPFailure, serverName: String) async throws {
        let written = channel.eventLoop.makePromise(of: Void.self)
        let writer = UpgradeRefusalWriter(answer: response(failure, serverName: serverName), written: written)
        try await channel.eventLoop.submit {
            // Right behind TLS when the connection has it (the answer is encrypted),
            // else next to the socket.
            let pipeline = channel.pipeline.syncOperations
            if let tls = try? pipeline.handler(type: NIOSSLServerHandler.self) {
                try pipeline.addHandler(writer, position: .after(tls))
            } else {
                try pipeline.addHandler(writer, position: .first)
            }
        }.get()
        try await written.futureResult.get()
    }

    /// The raw HTTP/1.1 response.
    static func response(_ failure: HTTPFailure, serverName: String) -> [UInt8] {
        var body: [UInt8] = []
        failure.json.encode(into: &body)
        body.append(UInt8(ascii: "\n"))
        var head = "HTTP/1.1 \(failure.status.code) \(failure.status.reasonPhrase)\r\n"
        var fields = failure.headers
        fields[.contentType] = "application/json"
        fields[.contentLength] = String(body.count)
        fields[.server] = serverName
        fields[.connection] = "close"
        for field in fields { head += "\(field.name.rawName): \(field.value)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    func handlerAdded(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: answer)), promise: written)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        written.fail(ChannelError.ioOnClosedChannel)  // ignored once written
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // The answer is out: whatever the server writes after it is dropped.
        promise?.succeed(())
    }

    func flush(context: ChannelHandlerContext) {}
}
