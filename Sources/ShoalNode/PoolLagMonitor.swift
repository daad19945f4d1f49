import Blocking
import CoreMetrics
import Logging

/// The node's watch on Swift's cooperative pool: a `PoolLagProbe` (a tiny task every
/// 100 ms; how late it runs) whose figures go to the metrics, and a warning in the log
/// whenever a ready task ran more than `warningLag` late (something blocked the pool).
///
/// It owns the probe and the two gauges: `shoal_pool_lag_seconds` (the worst lag of the
/// last 10–20 s) and `shoal_pool_lag_max_seconds` (the worst since the node started).
final class PoolLagMonitor: Sendable {
    /// A lag past this is logged as a warning.
    static let warningLag = Duration.seconds(1)

    let probe: PoolLagProbe

    init(factory: any MetricsFactory, logger: Logger) {
        let recent = Gauge(label: "shoal_pool_lag_seconds", dimensions: [], factory: factory)
        let worst = Gauge(label: "shoal_pool_lag_max_seconds", dimensions: [], factory: factory)
        probe = PoolLagProbe { figures in
            recent.record(figures.recentWorst.seconds)
            worst.record(figures.worst.seconds)
            if figures.last > Self.warningLag {
                logger.warning("the cooperative pool stalled: a ready task ran \(figures.last.formattedSeconds) s late (blocking work on the pool?)")
            }
        }
    }

    func start() { probe.start() }
    func stop() { probe.stop() }
}

extension Duration {
    /// The duration in seconds, as a Double.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    /// Seconds with three decimals (`1.523`).
    var formattedSeconds: String {
        let millis = Int64((seconds * 1000).rounded())
        let fraction = String(millis % 1000)
        return "\(millis / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
