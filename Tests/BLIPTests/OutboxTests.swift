import Testing
import TestSupport

@testable import BLIP

@Suite(.ownThread) struct OutboxTests {
    static func configuration(frame: Int = 100, small: Int = 100, window: Int = 128_000) -> BLIPConfiguration {
        var configuration = BLIPConfiguration()
        configuration.maxFrameSize = frame
        configuration.smallFrameSize = small
        configuration.maxUnackedBytes = window
        return configuration
    }

    /// Sends everything the outbox offers (as if each frame had `data.count + 4` wire bytes).
    static func drain(_ outbox: inout Outbox, limit: Int = 100_000) -> [Outbox.Frame] {
        var sent: [Outbox.Frame] = []
        while sent.count < limit, let work = outbox.next() {
            if case .frame(let frame) = work {
                outbox.didSend(frame, wireBytes: frame.data.count + 4)
                sent.append(frame)
            }
        }
        return sent
    }

    static func flags(urgent: Bool = false) -> BLIPFrameFlags { urgent ? [.urgent] : [] }

    @Test func roundRobinAndNumbering() {
        var outbox = Outbox(configuration: Self.configuration())
        for id in 1...3 {
            outbox.enqueue(id: UInt64(id), type: .request, number: 0, flags: [], data: [UInt8](repeating: 0, count: 250))
        }
        let sent = Self.drain(&outbox)
        #expect(sent.map(\.id) == [1, 2, 3, 1, 2, 3, 1, 2, 3])
        #expect(sent.map(\.number) == [1, 2, 3, 1, 2, 3, 1, 2, 3])
        #expect(sent.map(\.isFirst) == [true, true, true] + [Bool](repeating: false, count: 6))
        #expect(sent.map(\.isLast) == [false, false, false, false, false, false, true, true, true])
        #expect(sent.map(\.data.count) == [100, 100, 100, 100, 100, 100, 50, 50, 50])
        #expect(outbox.messageCount == 0)
    }

    /// In-order requests: a short one queued after a long one is not sent before the long
    /// one's last frame (round robin alone would finish it first); others still interleave.
    @Test func inOrderRequestsCompleteInTheOrderQueued() {
        var outbox = Outbox(configuration: Self.configuration())
        outbox.enqueue(id: 1, type: .request, number: 0, flags: [], data: [UInt8](repeating: 0, count: 250), inOrder: true)
        outbox.enqueue(id: 2, type: .request, number: 0, flags: [], data: [UInt8](repeating: 0, count: 10), inOrder: true)
        outbox.enqueue(id: 3, type: .request, number: 0, flags: [], data: [UInt8](repeating: 0, count: 10))
        outbox.enqueue(id: 4, type: .request, number: 0, flags: [], data: [UInt8](repeating: 0, count: 10), inOrder: true)
        let sent = Self.drain(&outbox)
        #expect(sent.map(\.id) == [1, 3, 1, 1, 2, 4])
        let lastFrames = sent.filter(\.isLast).map(\.id)
        #expect(lastFrames.firstIndex(of: 1)! < lastFrames.firstIndex(of: 2)!)
        // Numbers follow the order of first frames, as always.
        #expect(sent.filter(\.isFirst).map(\.number) == [1, 2, 3, 4])
        #expect(outbox.messageCount == 0)

        // A waiting in-order request that is withdrawn lets the next one through.
        outbox.enqueue(id: 5, type: .request, number: 0, flags: [], data: [UInt8](repeating: 0, count: 150), inOrder: true)
        outbox.enqueue(id: 6, type: .request, number: 0, flags: [], data: [0], inOrder: true)
        outbox.enqueue(id: 7, type: .request, number: 0, flags: [], data: [0], inOrder: true)
        let removed = outbox.removeUnsent(id: 6)
        #expect(removed)
        let rest = Self.drain(&outbox)
        #expect(rest.map(\.id) == [5, 5, 7])
    }

    @Test func repliesKeepTheirNumberAndRequestsAreNumberedWhenStarted() {
        var outbox = Outbox(configuration: Self.configuration())
        outbox.enqueue(id: 1, type: .response, number: 7, flags: [], data: [0])
        outbox.enqueue(id: 2, type: .request, number: 0, flags: [], data: [0])
        outbox.enqueue(id: 3, type: .request, number: 0, flags: [], data: [0])
        let removed = outbox.removeUnsent(id: 2)
        #expect(removed)
        let sent = Self.drain(&outbox)
        #expect(sent.map(\.number) == [7, 1])
        #expect(sent.map(\.type) == [.response, .request])
    }

    @Test func urgentGoesAfterFirstStartedNormalMessage() {
        var outbox = Outbox(configuration: Self.configuration())
        outbox.enqueue(id: 1, type: .request, number: 0, flags: [], data: [UInt8](repeating: 0, count: 300))
        outbox.enqueue(id: 2, type: .request, number: 0, flags: [], data: [UInt8](repeating: 0, count: 300))
        outbox.enqueue(id: 3, type: .request, number: 0, flags: [], data: [UInt8](repeating: 0, count: 300))
        // Start all three.
        var sent: [UInt64] = []
        for _ in 0..<3 {
            guard case .frame(let frame) = outbox.next() else { Issue.record("no frame"); return }
            outbox.didSend(frame, wireBytes: 104)
            sent.append(frame.id)
        }
        // Queue is [1, 2, 3] (all started); urgent 4 goes right after 1.
        outbox.enqueue(id: 4, type: .request, number: 0, flags: [.urgent], data: [0])
        let rest = Self.drain(&outbox).map(\.id)
        #expect(sent + rest == [1, 2, 3, 1, 4, 2, 3, 1, 2, 3])
    }

    @Test func newUrgentNeverOvertakesUnstartedMessages() {
        var outbox = Outbox(configuration: Self.configuration())
        outbox.enqueue(id: 1, type: .request, number: 0, flags: [], data: [0])
        outbox.enqueue(id: 2, type: .request, number: 0, flags: [], data: [0])
        outbox.enqueue(id: 3, type: .request, number: 0, flags: [.urgent], data: [0])
        let sent = Self.drain(&outbox)
        #expect(sent.map(\.id) == [1, 2, 3])
        #expect(sent.map(\.number) == [1, 2, 3])
    }

    @Test func urgentMessagesQueueBehindEachOtherWithANormalOneBetween() {
        var outbox = Outbox(configuration: Self.configuration(frame: 64, small: 64))
        let big = [UInt8](repeating: 0, count: 1000)
        outbox.enqueue(id: 1, type: .request, number: 0, flags: [], data: big)
        outbox.enqueue(id: 2, type: .request, number: 0, flags: [], data: big)
        _ = Self.drain(&outbox, limit: 2)  // both started: queue [1, 2]
        outbox.enqueue(id: 3, type: .request, number: 0, flags: [.urgent], data: big)  // [1, 3, 2]
        outbox.enqueue(id: 4, type: .request, number: 0, flags: [.urgent], data: [0])  // [1, 3, 2, 4]
        let order = Self.drain(&outbox, limit: 6).map(\.id)
        #expect(order == [1, 3, 2, 4, 1, 3])
    }

    @Test func normalFramesShrinkWhileUrgentWaits() {
        var outbox = Outbox(configuration: Self.configuration(frame: 1000, small: 100))
        let big = [UInt8](repeating: 0, count: 5000)
        outbox.enqueue(id: 1, type: .request, number: 0, flags: [], data: big)
        outbox.enqueue(id: 2, type: .request, number: 0, flags: [], data: big)
        _ = Self.drain(&outbox, limit: 2)
        outbox.enqueue(id: 3, type: .request, number: 0, flags: [.urgent], data: big)  // [1, 3, 2]
        let sent = Self.drain(&outbox, limit: 4)
        // 1 goes back to the end: [3, 2, 1]; urgent 3 goes after the first normal: [2, 3, 1].
        #expect(sent.map(\.id) == [1, 3, 2, 3])
        #expect(sent.map(\.data.count) == [100, 1000, 100, 1000])
    }

    @Test func acksGoFirstAndCoalesce() {
        var outbox = Outbox(configuration: Self.configuration())
        outbox.enqueue(id: 1, type: .request, number: 0, flags: [], data: [0])
        outbox.enqueueAck(type: .ackRequest, number: 3, byteCount: 100)
        outbox.enqueueAck(type: .ackRequest, number: 3, byteCount: 200)
        outbox.enqueueAck(type: .ackResponse, number: 3, byteCount: 50)
        guard case .ack(.ackRequest, 3, 200) = outbox.next() else { Issue.record("expected ACKMSG"); return }
        guard case .ack(.ackResponse, 3, 50) = outbox.next() else { Issue.record("expected ACKRPY"); return }
        guard case .frame = outbox.next() else { Issue.record("expected the request"); return }
    }

    @Test func flowControlPausesAndResumes() {
        var outbox = Outbox(configuration: Self.configuration(frame: 16_384, small: 4096, window: 128_000))
        outbox.enqueue(id: 1, type: .request, number: 0, flags: [], data: [UInt8](repeating: 0, count: 1_000_000))
        var sentBytes = 0
        var frames = Self.drain(&outbox)
        sentBytes = frames.reduce(0) { $0 + $1.data.count + 4 }
        #expect(sentBytes >= 128_000)
        #expect(sentBytes < 128_000 + 16_384 + 4)
        #expect(outbox.frozenCount == 1)
        let idle = outbox.next()
        #expect(idle == nil)
        #expect(outbox.peakUnackedBytes == UInt64(sentBytes))

        // An ACK for too little keeps it paused; a larger one resumes it.
        let tooLittle = outbox.receivedAck(type: .ackRequest, number: 1, byteCount: 100)
        let wrongType = outbox.receivedAck(type: .ackResponse, number: 1, byteCount: UInt64(sentBytes))
        let moreThanSent = outbox.receivedAck(type: .ackRequest, number: 1, byteCount: UInt64(sentBytes) + 1)
        let enough = outbox.receivedAck(type: .ackRequest, number: 1, byteCount: 50_000)
        #expect(!tooLittle)
        #expect(!wrongType)
        #expect(!moreThanSent)
        #expect(enough)
        frames = Self.drain(&outbox)
        let more = frames.reduce(0) { $0 + $1.data.count + 4 }
        #expect(more > 0)
        #expect(UInt64(sentBytes + more - 50_000) < 128_000 + 16_384 + 4)

        // Acknowledge everything repeatedly until the message is done.
        var total = sentBytes + more
        var rounds = 0
        while outbox.messageCount > 0 && rounds < 1000 {
            outbox.receivedAck(type: .ackRequest, number: 1, byteCount: UInt64(total))
            total += Self.drain(&outbox).reduce(0) { $0 + $1.data.count + 4 }
            rounds += 1
        }
        #expect(outbox.messageCount == 0)
        #expect(outbox.peakUnackedBytes < 128_000 + 16_384 + 4)
    }

    @Test func thousandsOfQueuedMessagesStayInOrder() {
        var outbox = Outbox(configuration: Self.configuration(frame: 64, small: 64))
        for id in 1...3000 {
            outbox.enqueue(id: UInt64(id), type: .request, number: 0, flags: [], data: [UInt8](repeating: 0, count: 100))
        }
        var sent = Self.drain(&outbox, limit: 3000)
        // An urgent message in the middle of a long queue goes after the first normal message.
        outbox.enqueue(id: 9999, type: .request, number: 0, flags: [.urgent], data: [0])
        sent += Self.drain(&outbox)
        #expect(sent.count == 6001)
        #expect(sent.prefix(3000).map(\.id) == (1...3000).map(UInt64.init))
        #expect(sent[3000].id == 1)
        #expect(sent[3001].id == 9999)
        #expect(sent[3001].number == 3001)
        #expect(sent.suffix(2999).map(\.id) == (2...3000).map(UInt64.init))
        #expect(outbox.messageCount == 0)
    }

    @Test func acksForUnknownMessagesAreHarmless() {
        var outbox = Outbox(configuration: Self.configuration())
        let resumed = outbox.receivedAck(type: .ackRequest, number: 99, byteCount: 1)
        #expect(!resumed)
        outbox.removeAll()
        let work = outbox.next()
        #expect(work == nil)
    }
}

extension Outbox.Work: Equatable {
    public static func == (lhs: Outbox.Work, rhs: Outbox.Work) -> Bool {
        switch (lhs, rhs) {
        case (.ack(let a, let b, let c), .ack(let d, let e, let f)): a == d && b == e && c == f
        case (.frame(let x), .frame(let y)): x.id == y.id && x.data == y.data && x.flags == y.flags
        default: false
        }
    }
}
