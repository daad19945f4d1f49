import NIOCore
import NIOHTTP1

/// Client side: sits behind the HTTP upgrade handler and, when the server answers the
/// upgrade with an ordinary HTTP response (401, 404, …), collects its status and the
/// start of its body so the dial can report why it was refused. Removed when the
/// upgrade succeeds.
final class UpgradeRefusalCollector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    static let maxBody = 2048
    let promise: EventLoopPromise<BLIPUpgradeRefused>
    private var status: Int?
    private var body: [UInt8] = []

    init(promise: EventLoopPromise<BLIPUpgradeRefused>) {
        self.promise = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
        case .body(var buffer):
            let room = Self.maxBody - body.count
            if room > 0, let bytes = buffer.readBytes(length: min(room, buffer.readableBytes)) {
                body += bytes
            }
        case .end:
            promise.succeed(BLIPUpgradeRefused(status: status ?? 0, body: String(decoding: body, as: UTF8.self)))
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let status {
            promise.succeed(BLIPUpgradeRefused(status: status, body: String(decoding: body, as: UTF8.self)))
        } else {
            promise.fail(ChannelError.ioOnClosedChannel)
        }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        promise.fail(ChannelError.ioOnClosedChannel)  // ignored when already completed
    }
}
