import Logging
import Synchronization

/// One BLIP connection: request/response correlation, framing and interleaving
/// (urgent first, fairly), ACK-based flow control, compression, handlers per Profile.
///
/// Give it a transport, register handlers, and call `run(inbound:)` with the
/// transport's incoming events; `run` returns when the connection is over.
/// Requests can be sent (and handlers registered) before or while `run` runs.
///
/// Inside, a reader (the `run` task) decodes frames and assembles messages, a
/// single writer task encodes and sends frames in scheduling order, and each
/// incoming request is handled in its own task. All mutable state sits in one
/// Mutex that is never held across a suspension.
public final class BLIPConnection: Sendable {
    let transport: any BLIPTransport
    let configuration: BLIPConfiguration
    let logger: Logger
    let state: Mutex<ConnectionState>
    /// Wakes the writer when work is queued (at most one pending wake-up).
    let wakeStream: AsyncStream<Void>
    let wakeContinuation: AsyncStream<Void>.Continuation

    /// The WebSocket subprotocol the connection was opened with, when known (a dialed
    /// connection: what the server chose among those offered).
    public let subprotocol: String?
    /// The nemesis's faults on this link, when attached (`setFaults`), and the token
    /// that detaches it.
    let faults = Mutex<(faults: LinkFaults, token: UInt64)?>(nil)

    /// A connection over `transport`; nothing happens until `run(inbound:)`.
    public init(transport: any BLIPTransport, configuration: BLIPConfiguration = .init(),
                logger: Logger = Logger(label: "BLIP"), subprotocol: String? = nil)
    {
        self.transport = transport
        self.subprotocol = subprotocol
        self.configuration = configuration
        self.logger = logger
        state = Mutex(ConnectionState(configuration: configuration))
        (wakeStream, wakeContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Registers the handler for requests whose Profile is `profile` (before or after
    /// run starts). The handler's return value is the reply (RPY); a thrown BLIPError
    /// becomes an ERR reply with its domain/code/message/properties; any other thrown
    /// error becomes ERR BLIP/501 with its description. For noReply requests the
    /// return value is discarded. Each request is handled in its own task, so
    /// handlers run concurrently — unless `serial` is set: then the requests of this
    /// profile are handled one at a time, in the order the peer sent them.
    ///
    /// Requests with no registered Profile get ERR BLIP/404 "No handler for BLIP request"
    /// (for noReply: dropped, logged).
    public func setHandler(
        for profile: String, serial: Bool = false,
        _ handler: @escaping @Sendable (BLIPMessage) async throws -> BLIPMessage
    ) {
        state.withLock { state in
            state.handlers[profile] = handler
            state.immediateHandlers[profile] = nil
            if serial { state.serialProfiles.insert(profile) } else { state.serialProfiles.remove(profile) }
        }
    }

    /// Removes the handler for `profile`.
    public func removeHandler(for profile: String) {
        state.withLock { state in
            state.handlers[profile] = nil
            state.immediateHandlers[profile] = nil
        }
    }

    /// Sends a request and waits for its reply; throws BLIPError for ERR replies or if
    /// the connection closes first (or `BLIPError.cancelled` if the task is cancelled).
    /// The message's noReply flag is ignored (forced false).
    public func sendRequest(_ message: BLIPMessage) async throws(BLIPError) -> BLIPMessage {
        var message = message
        message.noReply = false
        let data = message.encodedData()
        let flags = message.frameFlags(type: .request)
        let id = state.withLock { $0.makeID() }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<BLIPMessage, BLIPError>, Never>) in
                let refusal: BLIPError? = state.withLock { state in
                    guard state.isOpen else { return state.closedFailure }
                    guard !Task.isCancelled else { return .cancelled }
                    state.waiters[id] = .continuation(continuation)
                    state.outbox.enqueue(id: id, type: .request, number: 0, flags: flags, data: data, inOrder: message.inOrder)
                    return nil
                }
                if let refusal {
                    continuation.resume(returning: .failure(refusal))
                } else {
                    wakeContinuation.yield()
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.cancelRequest(id: id) }
            waiter?.resume(returning: .failure(.cancelled))
        }
        return try result.get()
    }

    /// Sends a request with noReply set; returns once it has been queued (not
    /// necessarily sent). Throws if the connection is closed.
    public func sendNoReply(_ message: BLIPMessage) async throws(BLIPError) {
        var message = message
        message.noReply = true
        let data = message.encodedData()
        let flags = message.frameFlags(type: .request)
        let refusal: BLIPError? = state.withLock { state in
            guard state.isOpen else { return state.closedFailure }
            state.outbox.enqueue(id: state.makeID(), type: .request, number: 0, flags: flags, data: data, inOrder: message.inOrder)
            return nil
        }
        if let refusal {
            throw refusal
        }
        wakeContinuation.yield()
    }

    /// Closes cleanly (error nil) or with an error: pending requests fail (with the
    /// error, or `.connectionClosed`), running handlers are cancelled, queued frames
    /// are dropped, and the transport is closed. Later calls do nothing.
    public func close(error: BLIPError? = nil) async {
        let taken = state.withLock { state -> ([ConnectionState.Waiter], [Task<Void, Never>], [@Sendable () -> Void])? in
            guard state.isOpen else { return nil }
            state.phase = .closing(error)
            let waiters = Array(state.waiters.values)
            let tasks = Array(state.handlerTasks.values)
            let actions = state.closeActions
            state.waiters.removeAll()
            state.replyIDs.removeAll()
            state.handlerTasks.removeAll()
            state.closeActions.removeAll()
            state.outbox.removeAll()
            return (waiters, tasks, actions)
        }
        guard let (waiters, tasks, actions) = taken else { return }
        for action in actions { action() }
        if let error {
            logger.log(level: error.isProtocolError ? .error : .warning, "closing with error: \(error)")
        } else {
            logger.debug("closing")
        }
        wakeContinuation.finish()
        for task in tasks {
            task.cancel()
        }
        let failure = error ?? .connectionClosed
        for waiter in waiters {
            waiter.resume(returning: .failure(failure))
        }
        await transport.close(error: error)
        let closeWaiters = state.withLock { state in
            state.phase = .closed(error)
            defer { state.closeWaiters.removeAll() }
            return state.closeWaiters
        }
        for waiter in closeWaiters {
            waiter.resume()
        }
    }

    /// Attaches the nemesis's faults to this link (nil detaches them): see `LinkFaults`.
    /// A cut closes the connection with 503 "cut by the nemesis".
    public func setFaults(_ linkFaults: LinkFaults?) {
        let previous = faults.withLock { $0 }
        if let previous { previous.faults.detach(previous.token) }
        guard let linkFaults else {
            faults.withLock { $0 = nil }
            return
        }
        let token = linkFaults.attach { [weak self] in
            guard let self else { return }
            Task { await self.close(error: Self.cutError) }
        }
        faults.withLock { $0 = (linkFaults, token) }
        onClose { linkFaults.detach(token) }
    }

    static let cutError = BLIPError(code: 503, message: "cut by the nemesis")

    /// Runs `action` once when the connection starts closing (at once if it already
    /// has): for waits that no request stands for, such as a pull waiting to catch up.
    public func onClose(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard state.isOpen else { return true }
            state.closeActions.append(action)
            return false
        }
        if now { action() }
    }

    /// True once `close` started (locally, by the peer, or after a protocol error).
    public var isClosed: Bool {
        state.withLock { !$0.isOpen }
    }

    /// Counters for metrics: frames/bytes in/out, messages in/out.
    public var statistics: BLIPStatistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.peakUnackedBytes = Int(clamping: state.outbox.peakUnackedBytes)
            return statistics
        }
    }
}
