import Testing

@testable import BLIP

@Suite(.timeLimit(.minutes(1))) struct TransportTests {
    static func binaries(_ stream: AsyncStream<BLIPTransportEvent>) async -> ([[UInt8]], BLIPError??) {
        var frames: [[UInt8]] = []
        var closed: BLIPError??
        for await event in stream {
            switch event {
            case .binary(let bytes): frames.append(bytes)
            case .text: break
            case .closed(let error): closed = .some(error)
            }
        }
        return (frames, closed)
    }

    @Test func loopbackDeliversInOrderAndClosesBothEnds() async throws {
        let (a, b) = LoopbackTransport.pair()
        for index in 0..<100 {
            try await a.send([UInt8(index)])
        }
        try await b.send([42])
        await a.close(error: BLIPError(code: 1, message: "bye"))
        await #expect(throws: LoopbackTransport.ClosedError.self) { try await a.send([0]) }
        await #expect(throws: LoopbackTransport.ClosedError.self) { try await b.send([0]) }
        await b.close(error: nil)  // harmless
        let (atB, closeAtB) = await Self.binaries(b.inbound)
        #expect(atB == (0..<100).map { [UInt8($0)] })
        #expect(closeAtB == .some(BLIPError(code: 1, message: "bye")))
        let (atA, closeAtA) = await Self.binaries(a.inbound)
        #expect(atA == [[42]])
        #expect(closeAtA == nil)  // the closing end's own stream just finishes
        #expect(a.isClosed && b.isClosed)
    }

    @Test func faultyTransportCorruptsOneByteAndCounts() async throws {
        let (a, b) = LoopbackTransport.pair()
        let faulty = FaultyTransport(wrapping: a, inbound: a.inbound,
                                     faults: .init(corruptSentFrame: 1, corruptReceivedFrame: 0, corruptByteOffset: 1))
        for _ in 0..<3 {
            try await faulty.send([1, 2, 3])
        }
        try await b.send([7, 8])
        await b.close(error: nil)
        let (received, closedA) = await Self.binaries(faulty.inbound)
        #expect(received == [[7, 0xF7]])
        #expect(closedA == .some(nil))
        let (sent, _) = await Self.binaries(b.inbound)
        #expect(sent == [[1, 2, 3], [1, 0xFD, 3], [1, 2, 3]])
        #expect(faulty.sentFrames == 3)
        #expect(faulty.receivedFrames == 1)
    }

    @Test func faultyTransportDropsAfterSentFrames() async throws {
        let (a, b) = LoopbackTransport.pair()
        let faulty = FaultyTransport(wrapping: a, inbound: a.inbound, faults: .init(dropAfterSentFrames: 2))
        try await faulty.send([1])
        try await faulty.send([2])
        await #expect(throws: BLIPError.self) { try await faulty.send([3]) }
        #expect(faulty.didDrop)
        let (sent, closedB) = await Self.binaries(b.inbound)
        #expect(sent == [[1], [2]])
        #expect(closedB == .some(FaultyTransport.droppedError))
        let (_, closedA) = await Self.binaries(faulty.inbound)
        #expect(closedA == .some(FaultyTransport.droppedError))
    }

    @Test func faultyTransportDropsAfterReceivedFrames() async throws {
        let (a, b) = LoopbackTransport.pair()
        let faulty = FaultyTransport(wrapping: a, inbound: a.inbound, faults: .init(dropAfterReceivedFrames: 1))
        try await b.send([1])
        try await b.send([2])
        let (received, closedA) = await Self.binaries(faulty.inbound)
        #expect(received == [[1]])
        #expect(closedA == .some(FaultyTransport.droppedError))
        #expect(faulty.didDrop)
        await #expect(throws: BLIPError.self) { try await faulty.send([3]) }
    }
}
