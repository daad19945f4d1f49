import Logging

/// Handling decoded frames: ACKs, replies for waiting callers, requests for handlers.
extension BLIPConnection {
    /// What to do, outside the lock, after a frame was taken into the state.
    private enum Outcome {
        case none
        case wakeWriter
        case resume(ConnectionState.Waiter, Result<BLIPMessage, BLIPError>)
        case log(Logger.Level, String)
        case fatal(BLIPError)
        case immediate(ImmediateHandler, BLIPMessage, BLIPResponder)
    }

    /// Takes one decoded frame; returns a fatal error, if any.
    func receive(_ frame: BLIPFrame, size: Int) -> BLIPError? {
        let outcome = state.withLock { state -> Outcome in
            guard state.isOpen else { return .none }
            state.statistics.framesReceived += 1
            state.statistics.bytesReceived += size
            let event: BLIPDecoderEvent
            do throws(BLIPError) {
                event = try state.assembler.receive(frame)
            } catch {
                return .fatal(error)
            }
            return apply(event, to: &state)
        }
        switch outcome {
        case .none:
            break
        case .wakeWriter:
            wakeContinuation.yield()
        case .resume(let waiter, let result):
            waiter.resume(returning: result)
        case .log(let level, let message):
            logger.log(level: level, "\(message)")
        case .fatal(let error):
            return error
        case .immediate(let handler, let request, let responder):
            handler(request, responder)
        }
        return nil
    }

    private func apply(_ event: BLIPDecoderEvent, to state: inout ConnectionState) -> Outcome {
        switch event {
        case .partial:
            return .none
        case .acknowledged(let type, let number, let byteCount):
            state.statistics.acksReceived += 1
            return state.outbox.receivedAck(type: type, number: number, byteCount: byteCount) ? .wakeWriter : .none
        case .shouldAcknowledge(let type, let number, let byteCount):
            state.outbox.enqueueAck(type: type, number: number, byteCount: byteCount)
            return .wakeWriter
        case .ignoredFrame(let reason):
            state.statistics.frameErrors += 1
            return .log(.warning, "ignored frame: \(reason)")
        case .malformedMessage(let type, let number, let noReply, let error):
            state.statistics.frameErrors += 1
            if type == .request {
                guard !noReply else {
                    return .log(.warning, "dropped malformed no-reply request #\(number): \(error.message)")
                }
                enqueueReply(error.errorMessage(), type: .error, number: number, state: &state)
                return .wakeWriter
            }
            guard let waiter = state.takeWaiter(forReplyTo: number) else {
                return .log(.warning, "dropped malformed reply #\(number): \(error.message)")
            }
            let failure = BLIPError(code: error.code, message: "malformed reply: \(error.message)")
            return .resume(waiter, .failure(failure))
        case .message(let type, let number, let message):
            state.statistics.messagesReceived += 1
            switch type {
            case .request:
                return dispatch(message, number: number, state: &state)
            case .response, .error:
                guard let waiter = state.takeWaiter(forReplyTo: number) else {
                    return .log(.debug, "dropped reply #\(number): nobody waits for it any more")
                }
                let result: Result<BLIPMessage, BLIPError> =
                    type == .response ? .success(message) : .failure(BLIPError(errorReply: message))
                return .resume(waiter, result)
            case .ackRequest, .ackResponse:
                return .none
            }
        }
    }

    /// Starts the handler task for an incoming request (or answers 404).
    private func dispatch(_ request: BLIPMessage, number: UInt64, state: inout ConnectionState) -> Outcome {
        if let profile = request.profile, let immediate = state.immediateHandlers[profile] {
            var request = request
            request.requestNumber = number
            let responder = BLIPResponder(connection: self, number: number, urgent: request.urgent, noReply: request.noReply)
            return .immediate(immediate, request, responder)
        }
        guard let profile = request.profile, let handler = state.handlers[profile] else {
            let name = request.profile ?? "(none)"
            if request.noReply {
                return .log(.warning, "dropped no-reply request #\(number): no handler for profile \(name)")
            }
            // Sync Gateway's words, which Couchbase Lite recognizes (on `getCollections`
            // it then explains that the peer has no named collections).
            let error = BLIPError(code: BLIPError.Code.notFound, message: BLIPError.noHandlerMessage)
            enqueueReply(error.errorMessage(urgent: request.urgent), type: .error, number: number, state: &state)
            return .wakeWriter
        }
        let taskID = state.makeID()
        var request = request
        request.requestNumber = number
        if state.serialProfiles.contains(profile) {
            // One worker per serial profile drains its queue in arrival order.
            let idle = state.serialQueues[profile] == nil
            state.serialQueues[profile, default: []].append((request, number))
            if idle {
                state.handlerTasks[taskID] = Task { await self.drainSerialQueue(profile, taskID: taskID) }
            }
            return .none
        }
        // Created under the lock so that the task cannot unregister itself before
        // it is registered (it needs the lock to do so).
        state.handlerTasks[taskID] = Task {
            await self.handle(request, number: number, with: handler, taskID: taskID)
        }
        return .none
    }

    /// Handles the queued requests of a serial profile one by one; ends when the
    /// queue is empty (the next request starts a new worker).
    private func drainSerialQueue(_ profile: String, taskID: UInt64) async {
        while true {
            let next = state.withLock { state -> (BLIPMessage, UInt64, ConnectionState.Handler)? in
                guard var queue = state.serialQueues[profile], !queue.isEmpty, let handler = state.handlers[profile],
                      state.isOpen
                else {
                    state.serialQueues[profile] = nil
                    state.handlerTasks[taskID] = nil
                    return nil
                }
                let item = queue.removeFirst()
                state.serialQueues[profile] = queue
                return (item.request, item.number, handler)
            }
            guard let (request, number, handler) = next else { return }
            await handle(request, number: number, with: handler, taskID: state.withLock { $0.makeID() })
            if Task.isCancelled {
                state.withLock { state in
                    state.serialQueues[profile] = nil
                    state.handlerTasks[taskID] = nil
                }
                return
            }
        }
    }

    private func handle(
        _ request: BLIPMessage, number: UInt64, with handler: ConnectionState.Handler, taskID: UInt64
    ) async {
        let result: Result<BLIPMessage, BLIPError>
        do {
            result = .success(try await handler(request))
        } catch let error as BLIPError {
            result = .failure(error)
        } catch {
            result = .failure(BLIPError(code: BLIPError.Code.handlerFailed, message: String(describing: error)))
        }
        var reply: (message: BLIPMessage, type: BLIPMessageType)?
        if !request.noReply {
            switch result {
            case .success(var message):
                message.noReply = false
                message.urgent = message.urgent || request.urgent
                reply = (message, .response)
            case .failure(let error):
                reply = (error.errorMessage(urgent: request.urgent), .error)
            }
        }
        let data = reply?.message.encodedData()
        let wake = state.withLock { state -> Bool in
            state.handlerTasks[taskID] = nil
            guard let reply, let data, state.isOpen else { return false }
            state.outbox.enqueue(id: state.makeID(), type: reply.type, number: number,
                                 flags: reply.message.frameFlags(type: reply.type), data: data)
            return true
        }
        if wake {
            wakeContinuation.yield()
        }
    }

    private func enqueueReply(_ message: BLIPMessage, type: BLIPMessageType, number: UInt64,
                              state: inout ConnectionState)
    {
        state.outbox.enqueue(id: state.makeID(), type: type, number: number,
                             flags: message.frameFlags(type: type), data: message.encodedData())
    }
}
