import Synchronization
import Testing

@testable import BLIP

/// Requests answered by immediate handlers (no task per message) and requests whose
/// replies go to callbacks, over a LoopbackTransport.
@Suite(.timeLimit(.minutes(2))) struct ImmediateHandlerTests {
    @Test func immediateHandlerAnswersLaterInAnyOrder() async throws {
        try await withTimeout {
            let held = Mutex<[(BLIPMessage, BLIPResponder)]>([])
            let pair = ConnectionPair(configureB: { connection in
                connection.setImmediateHandler(for: "hold") { request, responder in
                    let batch = held.withLock { held -> [(BLIPMessage, BLIPResponder)] in
                        held.append((request, responder))
                        guard held.count == 10 else { return [] }
                        defer { held.removeAll() }
                        return held
                    }
                    // Answer all ten at once, in reverse order, once the tenth arrived.
                    guard !batch.isEmpty else { return }
                    connection.respond(batch.reversed().map { request, responder in
                        if request["fail"] != nil {
                            return (responder, .failure(BLIPError(domain: "HTTP", code: 409, message: "conflict")))
                        }
                        return (responder, .success(BLIPMessage(properties: [("n", request["n"] ?? "")])))
                    })
                }
            })
            try await withThrowingTaskGroup(of: (Int, Result<BLIPMessage, BLIPError>).self) { group in
                for n in 0..<10 {
                    group.addTask {
                        var message = BLIPMessage(profile: "hold", properties: [("n", String(n))])
                        if n == 3 { message["fail"] = "1" }
                        do {
                            return (n, .success(try await pair.a.sendRequest(message)))
                        } catch {
                            return (n, .failure(error as! BLIPError))
                        }
                    }
                }
                var seen = 0
                for try await (n, result) in group {
                    seen += 1
                    switch result {
                    case .success(let reply):
                        #expect(n != 3)
                        #expect(reply["n"] == String(n))
                    case .failure(let error):
                        #expect(n == 3)
                        #expect(error.domain == "HTTP" && error.code == 409)
                    }
                }
                #expect(seen == 10)
            }
            let (errorA, errorB) = await pair.shutdown()
            #expect(errorA == nil && errorB == nil)
        }
    }

    @Test func sendRequestsCallsBackWithEachReply() async throws {
        try await withTimeout {
            let pair = ConnectionPair(configureB: { $0.setHandler(for: "echo", echo) })
            let messages = (0..<300).map { BLIPMessage(profile: "echo", body: Array("m\($0)".utf8)) }
            let replies = Mutex<[Int: [UInt8]]>([:])
            let done = AsyncStream<Void>.makeStream()
            pair.a.sendRequests(messages) { index, result in
                let count = replies.withLock { replies in
                    replies[index] = (try? result.get())?.body
                    return replies.count
                }
                if count == messages.count { done.continuation.finish() }
            }
            for await _ in done.stream {}
            let all = replies.withLock { $0 }
            #expect(all.count == 300)
            for (index, body) in all { #expect(body == Array("m\(index)".utf8)) }
            await pair.shutdown()
        }
    }

    @Test func callbacksFailWhenTheConnectionCloses() async throws {
        try await withTimeout {
            let pair = ConnectionPair(configureB: { connection in
                connection.setImmediateHandler(for: "never") { _, _ in }
            })
            let failures = Mutex<[BLIPError]>([])
            let done = AsyncStream<Void>.makeStream()
            pair.a.sendRequests([BLIPMessage(profile: "never"), BLIPMessage(profile: "never")]) { _, result in
                if case .failure(let error) = result {
                    let count = failures.withLock { failures in
                        failures.append(error)
                        return failures.count
                    }
                    if count == 2 { done.continuation.finish() }
                }
            }
            try await Task.sleep(for: .milliseconds(50))
            await pair.a.close()
            for await _ in done.stream {}
            #expect(failures.withLock { $0 } == [.connectionClosed, .connectionClosed])
            // Requests on a closed connection fail at once.
            let late = Mutex<BLIPError?>(nil)
            pair.a.sendRequests([BLIPMessage(profile: "never")]) { _, result in
                if case .failure(let error) = result { late.withLock { $0 = error } }
            }
            #expect(late.withLock { $0 } == .connectionClosed)
            await pair.shutdown()
        }
    }

    @Test func immediateHandlerSeesRequestsInArrivalOrder() async throws {
        try await withTimeout {
            let order = Mutex<[Int]>([])
            let pair = ConnectionPair(configureB: { connection in
                connection.setImmediateHandler(for: "seq") { request, responder in
                    order.withLock { $0.append(Int(request["n"] ?? "") ?? -1) }
                    responder.respond(BLIPMessage())
                }
            })
            let done = AsyncStream<Void>.makeStream()
            let answered = Mutex(0)
            pair.a.sendRequests((0..<500).map { BLIPMessage(profile: "seq", properties: [("n", String($0))]) }) { _, _ in
                if answered.withLock({ $0 += 1; return $0 }) == 500 { done.continuation.finish() }
            }
            for await _ in done.stream {}
            #expect(order.withLock { $0 } == Array(0..<500))
            await pair.shutdown()
        }
    }
}
