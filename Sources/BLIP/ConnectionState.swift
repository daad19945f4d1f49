/// The mutable state of a `BLIPConnection`, kept in its Mutex. Plain synchronous
/// code: nothing here awaits, so the lock is never held across a suspension.
struct ConnectionState: Sendable {
    typealias Handler = @Sendable (BLIPMessage) async throws -> BLIPMessage
    typealias Waiter = ReplyWaiter

    enum Phase: Sendable {
        case open
        /// `close` started: waiters failed, transport closing.
        case closing(BLIPError?)
        /// The transport is closed.
        case closed(BLIPError?)
    }

    var phase: Phase = .open
    var outbox: Outbox
    var assembler: MessageAssembler
    var handlers: [String: Handler] = [:]
    /// Handlers called synchronously by the reader (see `setImmediateHandler`).
    var immediateHandlers: [String: BLIPConnection.ImmediateHandler] = [:]
    /// Profiles whose requests are handled one at a time, in arrival order.
    var serialProfiles: Set<String> = []
    /// Requests of serial profiles waiting for their profile's worker.
    var serialQueues: [String: [(request: BLIPMessage, number: UInt64)]] = [:]
    /// Callers of `sendRequest` waiting for a reply, by local message id.
    var waiters: [UInt64: Waiter] = [:]
    /// Local message id of each numbered request that awaits a reply.
    var replyIDs: [UInt64: UInt64] = [:]
    var handlerTasks: [UInt64: Task<Void, Never>] = [:]
    var closeWaiters: [CheckedContinuation<Void, Never>] = []
    /// Run once when `close` starts (see `BLIPConnection.onClose`).
    var closeActions: [@Sendable () -> Void] = []
    var runStarted = false
    /// Why the writer stopped, if a send failed; the reader closes with it when the
    /// inbound sequence ends without saying why.
    var writerFailure: BLIPError?
    var nextID: UInt64 = 1
    var statistics = BLIPStatistics()

    init(configuration: BLIPConfiguration) {
        outbox = Outbox(configuration: configuration)
        assembler = MessageAssembler(configuration: configuration)
    }

    var isOpen: Bool {
        if case .open = phase { return true }
        return false
    }

    /// The error the connection closed with (nil while open or after a clean close).
    var closeError: BLIPError? {
        switch phase {
        case .open: nil
        case .closing(let error), .closed(let error): error
        }
    }

    /// What a caller gets when it tries to use a closed connection.
    var closedFailure: BLIPError { closeError ?? .connectionClosed }

    mutating func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// The writer's next frame, with the bookkeeping of a request's first frame.
    mutating func nextWork() -> Outbox.Work? {
        guard isOpen, let work = outbox.next() else { return nil }
        if case .frame(let frame) = work, frame.isFirst, frame.type == .request {
            let expectsReply = !frame.flags.contains(.noReply)
            assembler.noteRequestSent(frame.number, expectsReply: expectsReply)
            if expectsReply && waiters[frame.id] != nil {
                replyIDs[frame.number] = frame.id
            }
        }
        return work
    }

    /// Removes and returns the waiter for the reply to request `number`.
    mutating func takeWaiter(forReplyTo number: UInt64) -> Waiter? {
        guard let id = replyIDs.removeValue(forKey: number) else { return nil }
        return waiters.removeValue(forKey: id)
    }

    /// A cancelled `sendRequest`: forget its waiter (and its message, if unsent).
    mutating func cancelRequest(id: UInt64) -> Waiter? {
        guard let waiter = waiters.removeValue(forKey: id) else { return nil }
        _ = outbox.removeUnsent(id: id)
        return waiter
    }
}

/// Who waits for the reply to a request: a suspended `sendRequest`, or the
/// callback of `sendRequests(_:onReply:)` (called by the reader, or by `close`).
enum ReplyWaiter: Sendable {
    case continuation(CheckedContinuation<Result<BLIPMessage, BLIPError>, Never>)
    case callback(@Sendable (Result<BLIPMessage, BLIPError>) -> Void)

    func resume(returning result: Result<BLIPMessage, BLIPError>) {
        switch self {
        case .continuation(let continuation): continuation.resume(returning: result)
        case .callback(let callback): callback(result)
        }
    }
}
