import Synchronization
import Testing

@testable import BLIP

/// The nemesis's faults on a link (`LinkFaults`): holds stop a direction until lifted,
/// a cut closes the link (and any link attached later), delays and losses make write
/// batches late, never lost.
@Suite(.timeLimit(.minutes(2))) struct LinkFaultsTests {
    static func echoPair(_ faultsA: LinkFaults? = nil, _ faultsB: LinkFaults? = nil) -> ConnectionPair {
        ConnectionPair(
            configureA: { if let faultsA { $0.setFaults(faultsA) } },
            configureB: { connection in
                if let faultsB { connection.setFaults(faultsB) }
                connection.setHandler(for: "echo") { BLIPMessage(body: $0.body) }
            })
    }

    static func echo(_ pair: ConnectionPair, _ text: String) -> Task<String?, Never> {
        Task {
            let reply = try? await pair.a.sendRequest(BLIPMessage(profile: "echo", body: Array(text.utf8)))
            return reply.map { String(decoding: $0.body, as: UTF8.self) }
        }
    }

    @Test func anOutboundHoldSendsNothingUntilLifted() async throws {
        try await withTimeout {
            let faults = LinkFaults()
            faults.set(.init(holdOutbound: true))
            let pair = Self.echoPair(faults)
            let reply = Self.echo(pair, "held")
            try await Task.sleep(for: .milliseconds(300))
            #expect(pair.b.statistics.framesReceived == 0)
            faults.set(.init())
            #expect(await reply.value == "held")
            await pair.shutdown()
        }
    }

    @Test func anInboundHoldReadsNothingUntilLifted() async throws {
        try await withTimeout {
            let faults = LinkFaults()
            faults.set(.init(holdInbound: true))
            let pair = Self.echoPair(nil, faults)
            let reply = Self.echo(pair, "waiting")
            #expect(await eventually { pair.a.statistics.messagesSent == 1 })
            try await Task.sleep(for: .milliseconds(300))
            #expect(pair.b.statistics.messagesReceived == 0, "a held link read a message")
            faults.set(.init())
            #expect(await reply.value == "waiting")
            await pair.shutdown()
        }
    }

    @Test func aCutClosesTheLinkAndEveryLinkAttachedLater() async throws {
        try await withTimeout {
            let faults = LinkFaults()
            let pair = Self.echoPair(faults)
            #expect(await Self.echo(pair, "before").value == "before")
            faults.set(.init(cut: true))
            let ended = await pair.runA.value
            #expect(ended?.code == 503)
            #expect(ended?.message.contains("nemesis") == true)
            _ = await pair.runB.value
            // A link made while the cut holds closes at once.
            let again = Self.echoPair(faults)
            #expect(await again.runA.value?.code == 503)
            _ = await again.runB.value
            // Lifted: links work again.
            faults.set(.init())
            let healed = Self.echoPair(faults)
            #expect(await Self.echo(healed, "after").value == "after")
            await healed.shutdown()
        }
    }

    @Test func aDelayMakesEveryRequestAtLeastThatLate() async throws {
        try await withTimeout {
            let faults = LinkFaults()
            faults.set(.init(delay: .milliseconds(250)))
            let pair = Self.echoPair(faults)
            let clock = ContinuousClock()
            let start = clock.now
            #expect(await Self.echo(pair, "late").value == "late")
            #expect(clock.now - start >= .milliseconds(250))
            await pair.shutdown()
        }
    }

    @Test func latenessAddsDelayJitterAndRetransmissions() {
        // No loss: the delay, moved by the jitter within ±jitter.
        let plain = LinkFaults.Settings(delay: .milliseconds(100), jitter: .milliseconds(40))
        #expect(LinkFaults.lateness(plain, random: { 0 }) == .milliseconds(60))
        #expect(LinkFaults.lateness(plain, random: { 0.5 }) == .milliseconds(100))
        // Every draw lost: each retransmission doubles, up to 3.2 s, then it goes.
        let lossy = LinkFaults.Settings(lossPercent: 100)
        #expect(LinkFaults.lateness(lossy, random: { 0 }) == .milliseconds(200 + 400 + 800 + 1600 + 3200))
        // A loss once, then through.
        var draws = [0.0, 0.99].makeIterator()
        #expect(LinkFaults.lateness(LinkFaults.Settings(lossPercent: 50), random: { draws.next()! }) == .milliseconds(200))
        #expect(LinkFaults.lateness(LinkFaults.Settings(), random: { 0 }) == .zero)
    }
}
