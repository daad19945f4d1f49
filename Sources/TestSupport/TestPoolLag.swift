import Blocking
import Foundation
import Testing

/// The cooperative pool's lag as a test process sees it: one `PoolLagProbe` for the
/// process, started by the first `TestNode`, `TestStore` or `TestPoolLag.start()`, that
/// prints the worst lag it saw when the process exits (`swift test`'s output then says
/// how badly the suite stalled the pool: a blocking call on it shows as a lag as long).
/// `@Suite(.poolLag)` prints the worst lag seen while that suite ran.
public enum TestPoolLag {
    /// The process's probe.
    public static let probe = PoolLagProbe()
    private static let started: Void = {
        probe.start()
        atexit {
            let figures = TestPoolLag.probe.figures
            print("cooperative pool: worst lag \(TestPoolLag.describe(figures.worst)) over \(figures.samples) samples")
        }
    }()

    /// Starts the process's probe (once).
    public static func start() { _ = started }

    /// `1.234 s`, `12.3 ms`.
    public static func describe(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return seconds >= 1 ? String(format: "%.3f s", seconds) : String(format: "%.1f ms", seconds * 1000)
    }
}

/// A suite trait (`@Suite(.poolLag)`) that probes the cooperative pool while the suite
/// runs and prints the worst lag it saw at the end.
public struct PoolLagTrait: SuiteTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        TestPoolLag.start()
        let probe = PoolLagProbe()
        probe.start()
        defer {
            probe.stop()
            let figures = probe.figures
            print("\(test.name): worst cooperative-pool lag \(TestPoolLag.describe(figures.worst)) (\(figures.samples) samples)")
        }
        try await function()
    }
}

extension Trait where Self == PoolLagTrait {
    /// Reports the suite's worst cooperative-pool lag; see `PoolLagTrait`.
    public static var poolLag: PoolLagTrait { PoolLagTrait() }
}
