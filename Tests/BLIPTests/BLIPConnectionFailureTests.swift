import Synchronization
import Testing

@testable import BLIP

/// Closing, protocol errors, and transport faults: nothing hangs, pending requests fail.
@Suite(.timeLimit(.minutes(2))) struct BLIPConnectionFailureTests {
    /// A connection on one end of a loopback pair; the test drives the other end by hand.
    struct Lone {
        let connection: BLIPConnection
        let peer: LoopbackTransport.End
        let run: Task<BLIPError?, Never>

        init(configuration: BLIPConfiguration = .init()) {
            let (mine, peer) = LoopbackTransport.pair()
            connection = BLIPConnection(transport: mine, configuration: configuration, logger: quietLogger)
            self.peer = peer
            let connection = connection
            run = Task { await runToEnd(connection, inbound: mine.inbound) }
        }
    }

    @Test func textMessageIsFatal() async throws {
        try await withTimeout {
            let lone = Lone()
            let pending = Task { () -> BLIPError? in
                do throws(BLIPError) {
                    _ = try await lone.connection.sendRequest(BLIPMessage(profile: "x"))
                    return nil
                } catch {
                    return error
                }
            }
            #expect(await eventually { lone.connection.statistics.framesSent == 1 })
            lone.peer.sendText("hello")
            let error = await lone.run.value
            #expect(error?.isProtocolError == true)
            #expect(error?.message.contains("text") == true)
            #expect(await pending.value == error)
            #expect(lone.connection.isClosed)
            #expect(lone.peer.isClosed)
        }
    }

    @Test func garbageFrameIsFatalAndClosesTransportWithError() async throws {
        try await withTimeout {
            let (mine, peer) = LoopbackTransport.pair()
            let connection = BLIPConnection(transport: mine, logger: quietLogger)
            let run = Task { await runToEnd(connection, inbound: mine.inbound) }
            try await peer.send([0x01, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04])  // bad checksum
            let error = await run.value
            #expect(error?.message.contains("checksum mismatch") == true)
            // The peer sees an error close.
            var closeEvent: BLIPError??
            for await event in peer.inbound {
                if case .closed(let error) = event { closeEvent = error }
            }
            #expect(closeEvent == .some(error))
        }
    }

    @Test func closingFailsPendingRequestsAndCancelsHandlers() async throws {
        try await withTimeout {
            let handlerCancelled = Mutex(false)
            let pair = ConnectionPair(configureB: { connection in
                connection.setHandler(for: "never") { _ in
                    try? await Task.sleep(for: .seconds(600))
                    handlerCancelled.withLock { $0 = Task.isCancelled }
                    return BLIPMessage()
                }
            })
            let pending = (0..<5).map { _ in
                Task { () -> BLIPError? in
                    do throws(BLIPError) {
                        _ = try await pair.a.sendRequest(BLIPMessage(profile: "never"))
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            #expect(await eventually { pair.b.statistics.messagesReceived == 5 })
            let (errorA, errorB) = await pair.shutdown()
            #expect(errorA == nil)
            #expect(errorB == nil)  // a clean close by the peer
            for task in pending {
                #expect(await task.value == .connectionClosed)
            }
            #expect(await eventually { handlerCancelled.withLock { $0 } })
            // Using a closed connection fails at once.
            do throws(BLIPError) {
                _ = try await pair.a.sendRequest(BLIPMessage(profile: "x"))
                Issue.record("expected an error")
            } catch {
                #expect(error == .connectionClosed)
            }
            await #expect(throws: BLIPError.connectionClosed) { try await pair.b.sendNoReply(BLIPMessage()) }
        }
    }

    @Test func closingWithErrorPropagates() async throws {
        try await withTimeout {
            let pair = ConnectionPair(configureB: { connection in
                connection.setHandler(for: "never") { _ in
                    try await Task.sleep(for: .seconds(600))
                    return BLIPMessage()
                }
            })
            let pending = Task { () -> BLIPError? in
                do throws(BLIPError) {
                    _ = try await pair.a.sendRequest(BLIPMessage(profile: "never"))
                    return nil
                } catch {
                    return error
                }
            }
            #expect(await eventually { pair.b.statistics.messagesReceived == 1 })
            let failure = BLIPError(domain: "Shoal", code: 7, message: "going away")
            await pair.b.close(error: failure)
            #expect(await pair.runB.value == failure)
            #expect(await pair.runA.value == failure)  // the peer's error close
            #expect(await pending.value == failure)
        }
    }

    @Test func closeBeforeRun() async throws {
        try await withTimeout {
            let (mine, _) = LoopbackTransport.pair()
            let connection = BLIPConnection(transport: mine, logger: quietLogger)
            await connection.close()
            #expect(connection.isClosed)
            try await connection.run(inbound: mine.inbound)  // returns at once
            await #expect(throws: BLIPError.self) { try await connection.run(inbound: mine.inbound) }  // only once
        }
    }

    @Test func cancellingRunClosesTheConnection() async throws {
        try await withTimeout {
            let pair = ConnectionPair(configureB: { $0.setHandler(for: "echo", echo) })
            let reply = try await pair.a.sendRequest(BLIPMessage(profile: "echo", body: [1]))
            #expect(reply.body == [1])
            pair.runA.cancel()
            #expect(await pair.runA.value == nil)
            #expect(await pair.runB.value == nil)
            #expect(pair.a.isClosed && pair.b.isClosed)
        }
    }

    @Test func cancellingARequest() async throws {
        try await withTimeout {
            let pair = ConnectionPair(configureB: { connection in
                connection.setHandler(for: "slow") { request in
                    try? await Task.sleep(for: .milliseconds(50))
                    return request
                }
                connection.setHandler(for: "echo", echo)
            })
            let pending = Task { () -> BLIPError? in
                do throws(BLIPError) {
                    _ = try await pair.a.sendRequest(BLIPMessage(profile: "slow"))
                    return nil
                } catch {
                    return error
                }
            }
            #expect(await eventually { pair.b.statistics.messagesReceived == 1 })
            pending.cancel()
            #expect(await pending.value == .cancelled)
            // The late reply is dropped quietly; the connection goes on.
            #expect(await eventually { pair.a.statistics.messagesReceived == 1 })
            let reply = try await pair.a.sendRequest(BLIPMessage(profile: "echo", body: [1]))
            #expect(reply.body == [1])
            #expect(!pair.a.isClosed)
            await pair.shutdown()
        }
    }

    @Test func flowControlStopsASenderWhosePeerNeverAcknowledges() async throws {
        try await withTimeout {
            let recorder = RecordingTransport()
            let (inbound, feed) = AsyncStream.makeStream(of: BLIPTransportEvent.self)
            let connection = BLIPConnection(transport: recorder, logger: quietLogger)
            let run = Task { await runToEnd(connection, inbound: inbound) }
            let pending = Task { () -> BLIPError? in
                do throws(BLIPError) {
                    let big = BLIPMessage(profile: "big", body: [UInt8](repeating: 1, count: 1_000_000))
                    _ = try await connection.sendRequest(big)
                    return nil
                } catch {
                    return error
                }
            }
            #expect(await eventually { connection.statistics.flowControlPauses == 1 })
            let configuration = BLIPConfiguration()
            let sentWire = recorder.frames.reduce(0) { $0 + $1.count - 2 }  // minus 2-byte headers
            #expect(sentWire >= configuration.maxUnackedBytes)
            #expect(sentWire <= configuration.maxUnackedBytes + configuration.maxFrameSize + 8)
            #expect(connection.statistics.peakUnackedBytes == sentWire)
            let stalledAt = recorder.frames.count

            // An ACK lets it go on.
            let ack = BLIPFrameEncoder().encodeAck(type: .ackRequest, number: 1, byteCount: UInt64(sentWire))
            feed.yield(.binary(ack))
            #expect(await eventually { recorder.frames.count > stalledAt })
            #expect(await eventually { connection.statistics.flowControlPauses == 2 })

            feed.yield(.closed(nil))
            #expect(await run.value == nil)
            #expect(await pending.value == .connectionClosed)
            #expect(recorder.closed)
            #expect(recorder.closeError == nil)
        }
    }

    @Test func droppedConnectionMidMessageFailsInsteadOfHanging() async throws {
        try await withTimeout {
            let (ta, tb) = LoopbackTransport.pair()
            let faulty = FaultyTransport(wrapping: ta, inbound: ta.inbound,
                                         faults: .init(dropAfterSentFrames: 20))
            let a = BLIPConnection(transport: faulty, logger: quietLogger)
            let b = BLIPConnection(transport: tb, logger: quietLogger)
            b.setHandler(for: "echo", echo)
            let runA = Task { await runToEnd(a, inbound: faulty.inbound) }
            let runB = Task { await runToEnd(b, inbound: tb.inbound) }
            var generator = SeededGenerator(seed: 3)
            let body = generator.bytes(1_000_000)
            let outcome: BLIPError?
            do throws(BLIPError) {
                _ = try await a.sendRequest(BLIPMessage(profile: "echo", body: body))
                outcome = nil
            } catch {
                outcome = error
            }
            #expect(outcome != nil)
            #expect(outcome?.code == BLIPError.Code.connectionClosed)
            #expect(faulty.didDrop)
            #expect(faulty.sentFrames == 20)
            #expect(await runA.value != nil)
            #expect(await runB.value == FaultyTransport.droppedError)
            #expect(b.statistics.messagesReceived == 0)
        }
    }

    @Test func droppedConnectionWhileReceivingFailsToo() async throws {
        try await withTimeout {
            let (ta, tb) = LoopbackTransport.pair()
            let faulty = FaultyTransport(wrapping: ta, inbound: ta.inbound,
                                         faults: .init(dropAfterReceivedFrames: 10, receiveDelay: .milliseconds(1)))
            let a = BLIPConnection(transport: faulty, logger: quietLogger)
            let b = BLIPConnection(transport: tb, logger: quietLogger)
            b.setHandler(for: "big") { _ in BLIPMessage(body: [UInt8](repeating: 2, count: 2_000_000)) }
            let runA = Task { await runToEnd(a, inbound: faulty.inbound) }
            let runB = Task { await runToEnd(b, inbound: tb.inbound) }
            await #expect(throws: FaultyTransport.droppedError) { try await a.sendRequest(BLIPMessage(profile: "big")) }
            #expect(await runA.value == FaultyTransport.droppedError)
            #expect(await runB.value == FaultyTransport.droppedError)
        }
    }

    @Test func corruptedByteInTransitIsDetected() async throws {
        try await withTimeout {
            for offset in [-1, -5, 2, 40] {
                let (ta, tb) = LoopbackTransport.pair()
                let faulty = FaultyTransport(wrapping: ta, inbound: ta.inbound,
                                             faults: .init(corruptSentFrame: 3, corruptByteOffset: offset))
                let a = BLIPConnection(transport: faulty, logger: quietLogger)
                let b = BLIPConnection(transport: tb, logger: quietLogger)
                b.setHandler(for: "echo", echo)
                let runA = Task { await runToEnd(a, inbound: faulty.inbound) }
                let runB = Task { await runToEnd(b, inbound: tb.inbound) }
                let body = compressibleBytes(200_000)
                let result: BLIPError?
                do throws(BLIPError) {
                    _ = try await a.sendRequest(BLIPMessage(profile: "echo", body: body, compressed: offset > 0))
                    result = nil
                } catch {
                    result = error
                }
                #expect(result != nil, "offset \(offset)")
                let errorB = await runB.value
                #expect(errorB?.isProtocolError == true, "offset \(offset): \(String(describing: errorB))")
                #expect(await runA.value == errorB)
            }
        }
    }

    @Test func delayedFramesStillArriveInOrder() async throws {
        try await withTimeout {
            let (ta, tb) = LoopbackTransport.pair()
            let faulty = FaultyTransport(wrapping: ta, inbound: ta.inbound,
                                         faults: .init(sendDelay: .microseconds(200), receiveDelay: .microseconds(200)))
            let a = BLIPConnection(transport: faulty, logger: quietLogger)
            let b = BLIPConnection(transport: tb, logger: quietLogger)
            b.setHandler(for: "echo", echo)
            let runA = Task { await runToEnd(a, inbound: faulty.inbound) }
            let runB = Task { await runToEnd(b, inbound: tb.inbound) }
            let body = compressibleBytes(100_000)
            let reply = try await a.sendRequest(BLIPMessage(profile: "echo", body: body, compressed: true))
            #expect(reply.body == body)
            await a.close()
            #expect(await runA.value == nil)
            #expect(await runB.value == nil)
        }
    }

    @Test func corruptedStreamsIntoALiveConnectionNeverHang() async throws {
        try await withTimeout(120) {
            var generator = SeededGenerator(seed: 11)
            for round in 0..<150 {
                var (frames, _) = FuzzTests.validStream(seed: UInt64(round % 20 + 1))
                let target = Int.random(in: 0..<frames.count, using: &generator)
                if !frames[target].isEmpty {
                    let offset = Int.random(in: 0..<frames[target].count, using: &generator)
                    frames[target][offset] ^= UInt8.random(in: 1...255, using: &generator)
                }
                let lone = Lone(configuration: FuzzTests.configuration)
                lone.connection.setHandler(for: "p0", echo)
                for frame in frames {
                    try? await lone.peer.send(frame)
                }
                await lone.peer.close(error: nil)
                let error = await lone.run.value
                if let error {
                    #expect(error.isProtocolError, "\(error)")
                }
                #expect(lone.connection.isClosed)
            }
        }
    }
}
