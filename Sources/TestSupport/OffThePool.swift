import Foundation

/// Runs blocking work (waiting for a subprocess, reading its pipes to the end) on a
/// thread of its own, off Swift's cooperative pool. That pool has one thread per core
/// (two here): a test that blocks one of them for a minute stalls every async test
/// running beside it, whose requests then time out.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
