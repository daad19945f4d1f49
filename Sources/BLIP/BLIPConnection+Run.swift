/// Running a connection: the reader (inbound events → frames → messages) and the
/// single writer task (queued work → frames → transport).
extension BLIPConnection {
    /// Feeds the connection from the transport until it closes; returns normally on
    /// a clean close, throws the BLIPError on a protocol error or an error close. On
    /// return every pending request has failed with `.connectionClosed` (or the
    /// error) and the transport is closed.
    ///
    /// An inbound sequence that ends without `.closed` counts as a clean close by
    /// the peer (or as the send failure, if a send failed). Cancelling the task
    /// that runs `run` closes the connection cleanly. Call `run` once per
    /// connection; a second call throws.
    public func run(inbound: some AsyncSequence<BLIPTransportEvent, Never> & Sendable) async throws(BLIPError) {
        let alreadyRunning = state.withLock { state in
            defer { state.runStarted = true }
            return state.runStarted
        }
        if alreadyRunning {
            throw BLIPError(code: BLIPError.Code.unspecified, message: "BLIPConnection.run called twice")
        }
        await withDiscardingTaskGroup { group in
            group.addTask { await self.writeLoop() }
            group.addTask { await self.readLoop(inbound) }
            await self.waitUntilClosed()
            group.cancelAll()
        }
        if let error = state.withLock({ $0.closeError }) {
            throw error
        }
    }

    /// Suspends until `close` has closed the transport; cancellation closes cleanly.
    private func waitUntilClosed() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state -> Bool in
                    if case .closed = state.phase { return true }
                    state.closeWaiters.append(continuation)
                    return false
                }
                if done {
                    continuation.resume()
                }
            }
        } onCancel: {
            Task { await self.close(error: nil) }
        }
    }

    private func readLoop(_ inbound: some AsyncSequence<BLIPTransportEvent, Never>) async {
        var decoder = BLIPFrameDecoder(maxFrameOutput: configuration.maxMessageSize)
        for await event in inbound {
            if Task.isCancelled || isClosed {
                return
            }
            switch event {
            case .binary(let bytes):
                if let faults = faults.withLock({ $0?.faults }), !(await faults.admitInbound()) {
                    await close(error: Self.cutError)
                    return
                }
                let frame: BLIPFrame
                do {
                    frame = try decoder.decode(bytes)
                } catch {
                    state.withLock { state in
                        state.statistics.framesReceived += 1
                        state.statistics.bytesReceived += bytes.count
                    }
                    await close(error: error)
                    return
                }
                if let fatal = receive(frame, size: bytes.count) {
                    await close(error: fatal)
                    return
                }
            case .text:
                await close(error: .protocolError("received a text WebSocket message"))
                return
            case .closed(let error):
                await close(error: error)
                return
            }
        }
        // The sequence ended (or the task was cancelled because the connection closed).
        await close(error: state.withLock { $0.writerFailure })
    }

    /// Most frames (and bytes) the writer hands to the transport at once.
    static let maxFramesPerWrite = 256
    static let maxBytesPerWrite = 1 << 20

    private func writeLoop() async {
        var encoder = BLIPFrameEncoder(compressionLevel: configuration.compressionLevel)
        var wake = wakeStream.makeAsyncIterator()
        var frames: [[UInt8]] = []
        while true {
            // Everything ready goes to the transport in one call (one flush).
            var bytesQueued = 0
            while frames.count < Self.maxFramesPerWrite && bytesQueued < Self.maxBytesPerWrite,
                  let work = state.withLock({ $0.nextWork() })
            {
                let bytes: [UInt8]
                switch work {
                case .ack(let type, let number, let byteCount):
                    bytes = encoder.encodeAck(type: type, number: number, byteCount: byteCount)
                    state.withLock { state in
                        state.statistics.framesSent += 1
                        state.statistics.bytesSent += bytes.count
                        state.statistics.acksSent += 1
                    }
                case .frame(let frame):
                    bytes = encoder.encodeFrame(number: frame.number, flags: frame.flags, data: frame.data)
                    let header = BLIPFrameEncoder.headerLength(number: frame.number, flags: frame.flags)
                    state.withLock { state in
                        if state.outbox.didSend(frame, wireBytes: bytes.count - header) {
                            state.statistics.flowControlPauses += 1
                        }
                        state.statistics.framesSent += 1
                        state.statistics.bytesSent += bytes.count
                        if frame.isLast {
                            state.statistics.messagesSent += 1
                        }
                    }
                }
                frames.append(bytes)
                bytesQueued += bytes.count
            }
            if !frames.isEmpty {
                if let faults = faults.withLock({ $0?.faults }), !(await faults.admitOutbound()) {
                    state.withLock { state in
                        if state.writerFailure == nil { state.writerFailure = Self.cutError }
                    }
                    await transport.close(error: Self.cutError)
                    return
                }
                do {
                    try await transport.send(frames: frames)
                    frames.removeAll(keepingCapacity: true)
                } catch {
                    // Stop writing and close the transport, which ends the inbound
                    // sequence; the reader then closes the connection with the reason
                    // the transport gives (say, the peer's close), or with this one.
                    let failure = BLIPError(
                        code: BLIPError.Code.connectionClosed, message: "transport send failed: \(error)")
                    state.withLock { state in
                        if state.writerFailure == nil { state.writerFailure = failure }
                    }
                    await transport.close(error: failure)
                    return
                }
                continue
            }
            guard await wake.next() != nil else { return }
        }
    }
}
