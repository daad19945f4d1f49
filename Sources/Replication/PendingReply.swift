import BLIP
import Synchronization

/// The reply to a request sent with a callback, awaited later by one task.
final class PendingReply: Sendable {
    private struct State {
        var result: Result<BLIPMessage, BLIPError>?
        var waiter: CheckedContinuation<Result<BLIPMessage, BLIPError>, Never>?
    }
    private let state = Mutex(State())

    func fulfill(_ result: Result<BLIPMessage, BLIPError>) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<BLIPMessage, BLIPError>, Never>? in
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: result)
    }

    var value: Result<BLIPMessage, BLIPError> {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Result<BLIPMessage, BLIPError>? in
                    if let result = state.result { return result }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}

/// The first error of several concurrent tasks.
final class FirstFailure: Sendable {
    private let first = Mutex<(any Error)?>(nil)

    func record(_ error: any Error) {
        first.withLock { $0 = $0 ?? error }
    }

    var error: (any Error)? { first.withLock { $0 } }
}
