/// Requests and handlers without a task per message, for high-rate traffic (a
/// replication's `rev` messages): requests whose replies go to a callback, and
/// handlers that the reader calls directly and that answer later through a
/// `BLIPResponder`.
extension BLIPConnection {
    /// A handler called synchronously by the connection's reader for each request of
    /// its profile, in arrival order. It must not block: it takes the request,
    /// starts whatever work it needs elsewhere, and answers (exactly once, from any
    /// task, possibly much later) through the responder. Requests are never
    /// cancelled; a reply given after the connection closed is dropped.
    public typealias ImmediateHandler = @Sendable (BLIPMessage, BLIPResponder) -> Void

    /// Registers an immediate handler for `profile` (replacing any handler of it).
    public func setImmediateHandler(for profile: String, _ handler: @escaping ImmediateHandler) {
        state.withLock { state in
            state.immediateHandlers[profile] = handler
            state.handlers[profile] = nil
            state.serialProfiles.remove(profile)
        }
    }

    /// Queues requests (their noReply flag is ignored) and returns at once. The reply
    /// to `messages[i]` (or its failure: ERR reply, connection closed) is passed to
    /// `onReply(i, result)`, by the reader or by `close`; the callback must not
    /// block. If the connection is already closed, every callback gets the failure
    /// before this returns.
    public func sendRequests(
        _ messages: [BLIPMessage], onReply: @escaping @Sendable (Int, Result<BLIPMessage, BLIPError>) -> Void
    ) {
        guard !messages.isEmpty else { return }
        var encoded: [(data: [UInt8], flags: BLIPFrameFlags, inOrder: Bool)] = []
        encoded.reserveCapacity(messages.count)
        for var message in messages {
            message.noReply = false
            encoded.append((message.encodedData(), message.frameFlags(type: .request), message.inOrder))
        }
        let refusal: BLIPError? = state.withLock { state in
            guard state.isOpen else { return state.closedFailure }
            for (index, item) in encoded.enumerated() {
                let id = state.makeID()
                state.waiters[id] = .callback { onReply(index, $0) }
                state.outbox.enqueue(id: id, type: .request, number: 0, flags: item.flags, data: item.data, inOrder: item.inOrder)
            }
            return nil
        }
        if let refusal {
            for index in messages.indices { onReply(index, .failure(refusal)) }
            return
        }
        wakeContinuation.yield()
    }

    /// Answers several requests of immediate handlers at once (one lock, one writer
    /// wake-up). Replies to no-reply requests are skipped.
    public func respond(_ replies: [(responder: BLIPResponder, result: Result<BLIPMessage, BLIPError>)]) {
        var queued: [(number: UInt64, type: BLIPMessageType, flags: BLIPFrameFlags, data: [UInt8])] = []
        queued.reserveCapacity(replies.count)
        for (responder, result) in replies where !responder.noReply {
            switch result {
            case .success(var message):
                message.noReply = false
                message.urgent = message.urgent || responder.urgent
                queued.append((responder.number, .response, message.frameFlags(type: .response), message.encodedData()))
            case .failure(let error):
                let message = error.errorMessage(urgent: responder.urgent)
                queued.append((responder.number, .error, message.frameFlags(type: .error), message.encodedData()))
            }
        }
        guard !queued.isEmpty else { return }
        let wake = state.withLock { state -> Bool in
            guard state.isOpen else { return false }
            for reply in queued {
                state.outbox.enqueue(id: state.makeID(), type: reply.type, number: reply.number, flags: reply.flags,
                                     data: reply.data)
            }
            return true
        }
        if wake {
            wakeContinuation.yield()
        }
    }
}

/// Answers one request taken by an immediate handler (see
/// `BLIPConnection.setImmediateHandler`). Answer exactly once; for a no-reply
/// request the answer is dropped.
public struct BLIPResponder: Sendable {
    let connection: BLIPConnection
    /// The request's number (the peer's sending order).
    public let number: UInt64
    let urgent: Bool
    /// True if the peer wants no reply.
    public let noReply: Bool

    /// Sends `message` as the reply (RPY).
    public func respond(_ message: BLIPMessage) {
        connection.respond([(self, .success(message))])
    }

    /// Sends `error` as an ERR reply.
    public func fail(_ error: BLIPError) {
        connection.respond([(self, .failure(error))])
    }
}
