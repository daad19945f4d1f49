import Synchronization
import Testing
import TestSupport

@testable import BLIP

/// Two BLIPConnections talking over a LoopbackTransport.
@Suite(.timeLimit(.minutes(2))) struct BLIPConnectionTests {
    @Test func requestAndResponse() async throws {
        try await withTimeout {
            let pair = ConnectionPair(configureB: { $0.setHandler(for: "echo", echo) })
            let request = BLIPMessage(profile: "echo", properties: [("a", "1"), ("ü", "✓")], body: Array("hi".utf8))
            let reply = try await pair.a.sendRequest(request)
            #expect(reply == BLIPMessage(properties: [("a", "1"), ("ü", "✓")], body: Array("hi".utf8)))
            let (errorA, errorB) = await pair.shutdown()
            #expect(errorA == nil)
            #expect(errorB == nil)
            #expect(pair.a.isClosed && pair.b.isClosed)
            #expect(pair.transportA.isClosed)
        }
    }

    @Test func bothSidesSendRequests() async throws {
        try await withTimeout {
            let pair = ConnectionPair(configureA: { $0.setHandler(for: "echo", echo) },
                                      configureB: { $0.setHandler(for: "echo", echo) })
            async let fromA = pair.a.sendRequest(BLIPMessage(profile: "echo", body: [1]))
            async let fromB = pair.b.sendRequest(BLIPMessage(profile: "echo", body: [2]))
            let (replyA, replyB) = try await (fromA, fromB)
            #expect(replyA.body == [1])
            #expect(replyB.body == [2])
            await pair.shutdown()
        }
    }

    @Test func errorRepliesKeepDomainCodeMessageAndProperties() async throws {
        try await withTimeout {
            let failure = BLIPError(domain: "HTTP", code: 409, message: "Document update conflict",
                                    properties: [("X-Rev", "2-abc")])
            let pair = ConnectionPair(configureB: { $0.setHandler(for: "fail") { _ in throw failure } })
            do throws(BLIPError) {
                _ = try await pair.a.sendRequest(BLIPMessage(profile: "fail"))
                Issue.record("expected an error")
            } catch {
                #expect(error == failure)
            }
            await pair.shutdown()
        }
    }

    struct PlainError: Error, CustomStringConvertible {
        var description: String { "disk on fire" }
    }

    @Test func otherErrorsBecome501() async throws {
        try await withTimeout {
            let pair = ConnectionPair(configureB: { $0.setHandler(for: "fail") { _ in throw PlainError() } })
            do throws(BLIPError) {
                _ = try await pair.a.sendRequest(BLIPMessage(profile: "fail"))
                Issue.record("expected an error")
            } catch {
                #expect(error.domain == "BLIP")
                #expect(error.code == 501)
                #expect(error.message == "disk on fire")
            }
            await pair.shutdown()
        }
    }

    @Test func unknownProfileGets404() async throws {
        try await withTimeout {
            let pair = ConnectionPair()
            do throws(BLIPError) {
                _ = try await pair.a.sendRequest(BLIPMessage(profile: "nope"))
                Issue.record("expected an error")
            } catch {
                #expect(error == BLIPError(code: 404, message: "No handler for BLIP request"))
            }
            do throws(BLIPError) {
                _ = try await pair.a.sendRequest(BLIPMessage(body: [1]))
                Issue.record("expected an error")
            } catch {
                #expect(error.code == 404)
            }
            // A handler registered while running is used from then on.
            pair.b.setHandler(for: "nope", echo)
            let late = try await pair.a.sendRequest(BLIPMessage(profile: "nope", body: [3]))
            #expect(late.body == [3])
            await pair.shutdown()
        }
    }

    @Test func noReplyRequests() async throws {
        try await withTimeout {
            let log = OrderLog()
            let pair = ConnectionPair(configureB: { connection in
                connection.setHandler(for: "note") { request in
                    #expect(request.noReply)
                    log.append(request.bodyString)
                    return BLIPMessage(body: Array("discarded".utf8))
                }
                connection.setHandler(for: "echo", echo)
            })
            try await pair.a.sendNoReply(BLIPMessage(profile: "note", body: Array("one".utf8)))
            try await pair.a.sendNoReply(BLIPMessage(profile: "nobody-home"))  // dropped, no 404
            try await pair.a.sendNoReply(BLIPMessage(profile: "note", body: Array("two".utf8)))
            #expect(await eventually { log.all.count == 2 })
            // A normal request afterwards still gets its own reply.
            let reply = try await pair.a.sendRequest(BLIPMessage(profile: "echo", body: [9]))
            #expect(reply.body == [9])
            #expect(Set(log.all) == ["one", "two"])
            #expect(pair.b.statistics.messagesSent == 1)  // only the echo reply
            #expect(pair.a.statistics.messagesReceived == 1)
            await pair.shutdown()
        }
    }

    @Test func twoHundredConcurrentRequests() async throws {
        try await withTimeout {
            let barrier = Barrier(count: 200)
            let pair = ConnectionPair(configureB: { connection in
                connection.setHandler(for: "wait") { request in
                    await barrier.arriveAndWait()  // all 200 are in flight at once
                    return BLIPMessage(body: request.body)
                }
            })
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let body = Array("request \(index)".utf8)
                        let reply = try await pair.a.sendRequest(BLIPMessage(profile: "wait", body: body))
                        #expect(reply.body == body)
                    }
                }
                try await group.waitForAll()
            }
            #expect(pair.a.statistics.messagesReceived == 200)
            await pair.shutdown()
        }
    }

    @Test(.ownThread) func fiveMegabytesBothWaysWhileUrgentMessagesPass() async throws {
        try await withTimeout(120) {
            let log = OrderLog()
            let pair = ConnectionPair(configureA: { $0.setHandler(for: "echo", echo) },
                                      configureB: { $0.setHandler(for: "echo", echo) })
            var generator = SeededGenerator(seed: 5)
            let big = generator.bytes(5 * 1024 * 1024)
            let bigFromA = Task {
                let reply = try await pair.a.sendRequest(BLIPMessage(profile: "echo", body: big))
                log.append("bigA")
                return reply.body
            }
            let bigFromB = Task {
                let reply = try await pair.b.sendRequest(BLIPMessage(profile: "echo", body: big))
                log.append("bigB")
                return reply.body
            }
            #expect(await eventually { pair.a.statistics.framesSent >= 3 })
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<5 {
                    group.addTask {
                        let reply = try await pair.a.sendRequest(
                            BLIPMessage(profile: "echo", body: [UInt8(index)], urgent: true))
                        #expect(reply.body == [UInt8(index)])
                        log.append("small\(index)")
                    }
                }
                try await group.waitForAll()
            }
            let (echoA, echoB) = (try await bigFromA.value, try await bigFromB.value)
            #expect(echoA == big)
            #expect(echoB == big)
            let order = log.all
            let firstBig = order.firstIndex { $0.hasPrefix("big") } ?? order.count
            let lastSmall = order.lastIndex { $0.hasPrefix("small") } ?? -1
            #expect(lastSmall < firstBig, "\(order)")

            // Flow control bounded the unacknowledged bytes of every message.
            let bound = BLIPConfiguration().maxUnackedBytes + BLIPConfiguration().maxFrameSize + 64
            for stats in [pair.a.statistics, pair.b.statistics] {
                #expect(stats.peakUnackedBytes > 0)
                #expect(stats.peakUnackedBytes <= bound)
                #expect(stats.acksReceived > 0)
                #expect(stats.acksSent > 0)
            }
            await pair.shutdown()
        }
    }

    @Test func compressedMessages() async throws {
        try await withTimeout {
            let pair = ConnectionPair(configureB: { $0.setHandler(for: "echo", echo) })
            let body = compressibleBytes(300_000)
            for _ in 0..<3 {
                let reply = try await pair.a.sendRequest(BLIPMessage(profile: "echo", body: body, compressed: true))
                #expect(reply.body == body)
                #expect(reply.compressed)
            }
            let stats = pair.a.statistics
            #expect(stats.bytesSent < body.count)  // three 300 KB bodies in less than one
            #expect(stats.bytesReceived < body.count)
            await pair.shutdown()
        }
    }

    @Test func manySmallCompressedAndPlainMessagesInterleaved() async throws {
        try await withTimeout {
            var configuration = BLIPConfiguration()
            configuration.maxFrameSize = 100
            let pair = ConnectionPair(configuration: configuration, configureA: { $0.setHandler(for: "echo", echo) },
                                      configureB: { $0.setHandler(for: "echo", echo) })
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<100 {
                    let from = index % 2 == 0 ? pair.a : pair.b
                    group.addTask {
                        let body = compressibleBytes(index * 37, seed: UInt64(index))
                        let request = BLIPMessage(profile: "echo", properties: [("i", "\(index)")], body: body,
                                                  urgent: index % 7 == 0, compressed: index % 3 == 0)
                        let reply = try await from.sendRequest(request)
                        #expect(reply.body == body)
                        #expect(reply["i"] == "\(index)")
                    }
                }
                try await group.waitForAll()
            }
            await pair.shutdown()
        }
    }

    @Test func statisticsCount() async throws {
        try await withTimeout {
            let pair = ConnectionPair(configureB: { $0.setHandler(for: "echo", echo) })
            _ = try await pair.a.sendRequest(BLIPMessage(profile: "echo", body: [1, 2, 3]))
            let a = pair.a.statistics
            let b = pair.b.statistics
            #expect(a.messagesSent == 1 && a.messagesReceived == 1)
            #expect(b.messagesSent == 1 && b.messagesReceived == 1)
            #expect(a.framesSent == b.framesReceived)
            #expect(a.bytesSent == b.bytesReceived)
            #expect(a.frameErrors == 0)
            await pair.shutdown()
        }
    }
}
