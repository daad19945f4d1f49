import Logging
import Synchronization
import Testing

@testable import BLIP

/// A small seeded PRNG (xorshift64*) so that random tests are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed
    }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}

struct TimeoutError: Error, CustomStringConvertible {
    var seconds: Double
    var description: String { "test timed out after \(seconds) s" }
}

/// Runs `body`, failing with `TimeoutError` if it takes longer than `seconds` (a
/// guard against hangs, never an assertion about speed).
func withTimeout<T: Sendable>(
    _ seconds: Double = 60, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimeoutError(seconds: seconds)
        }
        defer { group.cancelAll() }
        guard let result = try await group.next() else { throw TimeoutError(seconds: seconds) }
        return result
    }
}

/// Text bytes that compress well.
func compressibleBytes(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
    var generator = SeededGenerator(seed: seed)
    let words = ["alpha ", "beta ", "gamma ", "delta ", "{\"_id\":\"doc-", "\"rev\":\"1-abc\"", ",\n"]
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 16)
    while bytes.count < count {
        bytes.append(contentsOf: words[Int.random(in: 0..<words.count, using: &generator)].utf8)
    }
    return Array(bytes.prefix(count))
}

/// Encodes whole messages into a frame stream (no interleaving).
func frames(of messages: [(BLIPMessage, BLIPMessageType, UInt64)],
            configuration: BLIPConfiguration = .init()) -> [[UInt8]]
{
    var encoder = BLIPMessageEncoder(configuration: configuration)
    var result: [[UInt8]] = []
    for (message, type, number) in messages {
        result.append(contentsOf: encoder.encode(message, type: type, number: number))
    }
    return result
}

/// A logger that only lets critical messages through (tests provoke many errors).
let quietLogger: Logger = {
    var logger = Logger(label: "BLIPTests")
    logger.logLevel = .critical
    return logger
}()

/// Two connections over a loopback pair, both running.
final class ConnectionPair: Sendable {
    let a: BLIPConnection
    let b: BLIPConnection
    let transportA: LoopbackTransport.End
    let transportB: LoopbackTransport.End
    let runA: Task<BLIPError?, Never>
    let runB: Task<BLIPError?, Never>

    init(configuration: BLIPConfiguration = .init(), configureA: (BLIPConnection) -> Void = { _ in },
         configureB: (BLIPConnection) -> Void = { _ in })
    {
        let (ta, tb) = LoopbackTransport.pair()
        transportA = ta
        transportB = tb
        let a = BLIPConnection(transport: ta, configuration: configuration, logger: quietLogger)
        let b = BLIPConnection(transport: tb, configuration: configuration, logger: quietLogger)
        configureA(a)
        configureB(b)
        self.a = a
        self.b = b
        runA = Task { await runToEnd(a, inbound: ta.inbound) }
        runB = Task { await runToEnd(b, inbound: tb.inbound) }
    }

    /// Closes A cleanly and waits for both run loops; returns their outcomes.
    @discardableResult
    func shutdown() async -> (BLIPError?, BLIPError?) {
        await a.close()
        return (await runA.value, await runB.value)
    }
}

/// Runs a connection and returns the error it ended with (nil = clean).
func runToEnd(_ connection: BLIPConnection, inbound: some AsyncSequence<BLIPTransportEvent, Never> & Sendable) async
    -> BLIPError?
{
    do {
        try await connection.run(inbound: inbound)
        return nil
    } catch {
        return error
    }
}

/// A handler that echoes the request (properties without Profile, same body).
@Sendable func echo(_ request: BLIPMessage) async throws -> BLIPMessage {
    var reply = BLIPMessage(properties: request.properties.filter { $0.0 != "Profile" }, body: request.body)
    reply.compressed = request.compressed
    return reply
}

/// Records events in order across tasks.
final class OrderLog: Sendable {
    private let entries = Mutex<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// Opens once `count` arrivals happened; every arrival waits until then.
actor Barrier {
    private let count: Int
    private var arrived = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) { self.count = count }

    func arriveAndWait() async {
        arrived += 1
        if arrived >= count {
            for continuation in waiting { continuation.resume() }
            waiting.removeAll()
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }
}

/// A transport that records what it is asked to send and never delivers it.
final class RecordingTransport: BLIPTransport {
    private let state = Mutex<(frames: [[UInt8]], closed: Bool, closeError: BLIPError?)>(([], false, nil))

    var frames: [[UInt8]] { state.withLock { $0.frames } }
    var closed: Bool { state.withLock { $0.closed } }
    var closeError: BLIPError? { state.withLock { $0.closeError } }

    func send(_ frame: [UInt8]) async throws {
        let closed = state.withLock { state -> Bool in
            if !state.closed { state.frames.append(frame) }
            return state.closed
        }
        if closed { throw LoopbackTransport.ClosedError() }
    }

    func close(error: BLIPError?) async {
        state.withLock { state in
            if !state.closed { state.closeError = error }
            state.closed = true
        }
    }
}

/// Polls `condition` (yielding between polls) until it holds; false on timeout.
func eventually(_ seconds: Double = 30, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}
