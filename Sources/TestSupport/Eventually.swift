import Foundation

/// Polls `condition` until it holds or `timeout` passes; returns whether it held.
/// For waiting on asynchronous convergence in tests (never for timing assertions).
public func eventually(
    timeout: Duration = .seconds(20), every interval: Duration = .milliseconds(50),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}
